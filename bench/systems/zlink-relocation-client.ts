/**
 * The client of the relocation bench (bench/relocation.ts): a plain runtime on the object mesh that
 * keeps `depth` requests outstanding on one Spot while moving it between the two servers, one move
 * after the other, then samples single calls on a route the Spot just left (one Message Follow hop)
 * against direct ones. Reports one `{type:'relocation-result'}`. Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ZLinkRuntime, isZLinkError } from '../../lib/index.js';
import { PAYLOAD } from '../workload/payload.js';
import { emit, fail, onCommands } from '../workload/protocol.js';
import { quantile } from '../workload/stats.js';
import { BENCH_OBJECTS_MESH, objectsLocationStore } from './zlink-objects.js';
import {
  BENCH_LOAD_SPOT,
  BENCH_MOVER_SERVERS,
  BENCH_MOVER_TYPE,
  type MoveWindow,
  type RelocationCommand,
  type RelocationResultMessage,
} from './zlink-relocation.js';

const now = (): number => performance.now();

const sortedOf = (values: number[]): Float64Array => Float64Array.from(values).sort();

async function main(): Promise<void> {
  const runtime = new ZLinkRuntime({
    locationStore: objectsLocationStore(),
    meshes: {
      [BENCH_OBJECTS_MESH]: {
        rid: 'bench-mover-client',
        objectRole: 'client',
        discovery: 'auto',
        listen: { bindHost: '127.0.0.1', port: 0 },
      },
    },
  });
  await runtime.start();
  await runtime.waitForPeers(BENCH_OBJECTS_MESH, BENCH_MOVER_SERVERS.length, 30_000);
  const { objects, routeClient: route } = runtime;
  const echo = (id: string) => route.toSpot(id).request('echo', PAYLOAD).async();

  async function run(c: RelocationCommand): Promise<RelocationResultMessage> {
    await objects.createSpot(BENCH_MOVER_TYPE, BENCH_LOAD_SPOT, { node: BENCH_MOVER_SERVERS[0] });
    // The load: `depth` requests outstanding; each completion's time is kept.
    const done: number[] = [];
    let failed = 0;
    let stop = false;
    const lane = async (): Promise<void> => {
      while (!stop) {
        try {
          await echo(BENCH_LOAD_SPOT);
          done.push(now());
        } catch {
          failed++;
        }
      }
    };
    const t0 = now();
    const lanes = Array.from({ length: c.depth }, lane);
    await sleep(c.durationMs);
    const t1 = now();
    const windows: [number, number][] = [];
    const pauses: number[] = [];
    const relocateMs: number[] = [];
    let aborted = 0;
    while (now() - t1 < c.durationMs) {
      const start = now();
      const moved = await objects.relocate(BENCH_LOAD_SPOT);
      const end = now();
      windows.push([start, end]);
      relocateMs.push(end - start);
      if (moved.outcome === 'committed') pauses.push(moved.pauseMs);
      else aborted++;
      await sleep(c.moveEveryMs);
    }
    const t2 = now();
    stop = true;
    await Promise.all(lanes);
    const answeredIn = (a: number, b: number) => done.filter((t) => t >= a && t < b);
    // Each move with its answers, on the clock the servers stamp their steps with (bench/relocation-phases.ts).
    const epoch = (t: number): number => performance.timeOrigin + t;
    const moveWindows: MoveWindow[] = windows.map(([a, b]) => ({
      start: epoch(a),
      end: epoch(b),
      replies: answeredIn(a, b).map(epoch),
    }));
    const inMoves = moveWindows.reduce((n, w) => n + w.replies.length, 0);
    const moveTime = windows.reduce((ms, [a, b]) => ms + (b - a), 0);

    // The hop: the Spot moves away under a route this runtime has cached; its next call takes the
    // detour (relayed once), the one after the notice goes direct. Between samples a light load (one
    // call every millisecond to a Spot on each server) keeps all three processes awake: a detour
    // crosses three of them and a direct call two, so after an idle gap the detour would also pay a
    // third process's wake-up, which is the machine's, not the hop's.
    await objects.createSpot(BENCH_MOVER_TYPE, 'hop', { node: BENCH_MOVER_SERVERS[0] });
    for (const [i, node] of BENCH_MOVER_SERVERS.entries())
      await objects.createSpot(BENCH_MOVER_TYPE, `warm-${i}`, { node });
    await echo('hop');
    const warmGap = async (ms: number): Promise<void> => {
      const until = now() + ms;
      while (now() < until) {
        await Promise.all(BENCH_MOVER_SERVERS.map((_, i) => echo(`warm-${i}`)));
        await sleep(1);
      }
    };
    const detour: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < c.hopSamples; i++) {
      await objects.relocate('hop');
      await warmGap(20); // the old owner has let the activation go: the call meets its follow route
      let s = now();
      await echo('hop');
      detour.push((now() - s) * 1000);
      // The old owner's notice comes a moment after its relay (NOTICE_DELAY_MS): once it has, the next
      // call carries the flush that keeps this sender's order, and the direct sample goes straight.
      await warmGap(20);
      await echo('hop');
      await warmGap(20); // the same gap before each sample
      s = now();
      await echo('hop');
      direct.push((now() - s) * 1000);
    }
    const pause = sortedOf(pauses);
    const rel = sortedOf(relocateMs);
    return {
      moves: windows.length,
      aborted,
      pauseMs: { p50: quantile(pause, 0.5), p99: quantile(pause, 0.99), max: pause[pause.length - 1] ?? 0 },
      relocateMs: { p50: quantile(rel, 0.5), p99: quantile(rel, 0.99) },
      baselineReqPerSec: answeredIn(t0, t1).length / ((t1 - t0) / 1000),
      movingReqPerSec: answeredIn(t1, t2).length / ((t2 - t1) / 1000),
      duringMoveReqPerSec: moveTime > 0 ? inMoves / (moveTime / 1000) : 0,
      failed,
      detourP50Us: quantile(sortedOf(detour), 0.5),
      directP50Us: quantile(sortedOf(direct), 0.5),
      windows: moveWindows,
    };
  }

  const stop = async (): Promise<void> => {
    setTimeout(() => process.exit(0), 3000).unref();
    await runtime.close();
    process.exit(0);
  };
  onCommands(async (command) => {
    if (command.type === 'relocation') {
      try {
        emit({ type: 'relocation-result', result: await run(command as unknown as RelocationCommand) });
      } catch (error) {
        emit({
          type: 'error',
          message: isZLinkError(error) ? `${error.code}: ${error.message}` : String(error),
        });
      }
    } else if (command.type === 'shutdown') await stop();
    else throw new Error(`unknown command ${command.type}`);
  }, stop);
  emit({ type: 'ready', pid: process.pid });
}

main().catch(fail);
