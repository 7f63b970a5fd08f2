/**
 * Live relocation under load (issue 17 item 9): two object servers hosting a relocatable Spot type and
 * one client, on an object mesh through a private `redis-server`. The client keeps requests
 * outstanding on one Spot, first without moves (the baseline), then while moving it between the two
 * servers one move after the other; then it samples the cost of one Message Follow hop. Reports the
 * pause (seal to commit, p50 / p99), the throughput during moves against the baseline, and the hop.
 */
import { join } from 'node:path';
import { startPrivateRedis } from '../sample/private-redis.js';
import { BenchChild } from './children.js';
import { log } from './log.js';
import { type MovePhases, movePhases, movePhasesMarkdown } from './relocation-phases.js';
import {
  BENCH_MOVER_SERVERS,
  type MoveMark,
  type RelocationResultMessage,
} from './systems/zlink-relocation.js';

const STARTUP_TIMEOUT_MS = 60_000;
const STANDARD_REDIS = 'redis://127.0.0.1:6379';

export interface RelocationSection extends Omit<RelocationResultMessage, 'windows'> {
  /** The moves under load cut into the protocol's steps (the raw windows are not kept). */
  readonly phases: MovePhases;
  readonly store: string;
  readonly depth: number;
  readonly moveEveryMs: number;
  readonly hopSamples: number;
  /** The same hop in raw zeromq.js (bench/systems/raw-follow.ts): the floor a relay stands on here. */
  readonly rawDetourP50Us: number;
  readonly rawDirectP50Us: number;
}

/** Runs the relocation bench for `durationMs` of baseline and as long again with moves. */
export async function runRelocation(
  dir: string,
  durationMs: number,
): Promise<RelocationSection | { error: string }> {
  const privateRedis = await startPrivateRedis();
  const url = privateRedis?.url ?? STANDARD_REDIS;
  const store = privateRedis ? `private redis-server (${url})` : `redis on ${url} (no redis-server on PATH)`;
  const env = { BENCH_REDIS_URL: url, BENCH_KEY_PREFIX: `zlink-bench-moves-${process.pid}` };
  const children: BenchChild[] = [];
  const servers: BenchChild[] = [];
  const settings = { depth: 64, moveEveryMs: 50, hopSamples: 100 };
  try {
    for (const rid of BENCH_MOVER_SERVERS) {
      const server = new BenchChild(rid, join(dir, 'zlink-relocation-server.js'), {
        env: { ...env, BENCH_RID: rid },
      });
      children.push(server);
      servers.push(server);
      await server.next('ready', STARTUP_TIMEOUT_MS);
    }
    const client = new BenchChild('relocation client', join(dir, 'zlink-relocation-client.js'), { env });
    children.push(client);
    await client.next('ready', STARTUP_TIMEOUT_MS);
    log(`relocation: ${store}; ${durationMs / 1000} s baseline, ${durationMs / 1000} s with moves`);
    client.command({ type: 'relocation', durationMs, ...settings });
    const reply = await client.next('relocation-result', 4 * durationMs + 120_000);
    const { windows, ...result } = reply.result as RelocationResultMessage;
    const marks: MoveMark[] = [];
    for (const server of servers) {
      server.command({ type: 'relocation-marks' });
      marks.push(...((await server.next('relocation-marks', STARTUP_TIMEOUT_MS)).marks as MoveMark[]));
    }
    const phases = movePhases(windows, marks, result.baselineReqPerSec / 1000);
    const raw = await rawFollow(dir, children, settings.hopSamples);
    log(
      `relocation: ${result.moves} moves, pause p50 ${result.pauseMs.p50.toFixed(2)} ms, ` +
        `p99 ${result.pauseMs.p99.toFixed(2)} ms; hop ${(result.detourP50Us - result.directP50Us).toFixed(1)} µs ` +
        `(raw zeromq.js: ${(raw.rawDetourP50Us - raw.rawDirectP50Us).toFixed(1)} µs)`,
    );
    return { store, ...settings, ...result, ...raw, phases };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    // The client first: its runtime leaves before the servers it calls.
    for (const child of children.reverse()) await child.stop(5000);
    await privateRedis?.stop();
  }
}

/**
 * The raw zeromq.js hop's three processes (bench/systems/raw-follow.ts), started after the ZLink ones
 * have sampled theirs (the machine is otherwise idle then, as it was for them).
 */
async function rawFollow(
  dir: string,
  children: BenchChild[],
  samples: number,
): Promise<{ rawDetourP50Us: number; rawDirectP50Us: number }> {
  const script = join(dir, 'raw-follow.js');
  const start = async (name: string, args: string[]): Promise<{ child: BenchChild; endpoint: string }> => {
    const child = new BenchChild(name, script, { args });
    children.push(child);
    return { child, endpoint: (await child.next('ready', STARTUP_TIMEOUT_MS)).endpoint as string };
  };
  const { child: caller, endpoint: callerEndpoint } = await start('raw follow caller', ['caller']);
  const server = (await start('raw follow server', ['server', callerEndpoint])).endpoint;
  const relay = (await start('raw follow relay', ['relay', server])).endpoint;
  caller.command({ type: 'raw-follow', relay, server, samples });
  const reply = await caller.next('raw-follow-result', STARTUP_TIMEOUT_MS + samples * 100);
  return { rawDetourP50Us: reply.detourP50Us as number, rawDirectP50Us: reply.directP50Us as number };
}

/** The relocation targets of issue 32: name, measured, threshold, met. */
export function relocationTargets(r: RelocationSection): [string, string, string, boolean][] {
  const during = r.baselineReqPerSec > 0 ? r.duringMoveReqPerSec / r.baselineReqPerSec : 0;
  const hopMs = (r.detourP50Us - r.directP50Us) / 1000;
  return [
    ['req/s while a move is in progress ÷ without moves', `${during.toFixed(2)}×`, '≥ 0.70×', during >= 0.7],
    ['one follow hop over a direct call, p50', `${hopMs.toFixed(3)} ms`, '≤ 0.25 ms', hopMs <= 0.25],
    ['pause p99', `${r.pauseMs.p99.toFixed(2)} ms`, '< 50 ms', r.pauseMs.p99 < 50],
  ];
}

/** The markdown of the section. */
export function relocationMarkdown(r: RelocationSection | { error: string }): string[] {
  if ('error' in r) return [`**Relocation failed**: ${r.error.split('\n')[0]}`, ''];
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const dip = r.baselineReqPerSec > 0 ? 1 - r.duringMoveReqPerSec / r.baselineReqPerSec : 0;
  return [
    '### Relocation under load',
    '',
    `Two object servers and one client (${r.store}); the client keeps ${r.depth} requests outstanding on one ` +
      `relocatable Spot, first without moves, then while moving it between the servers one move after the ` +
      `other (${r.moveEveryMs} ms apart). The pause is the source's seal to its commit (the time calls to ` +
      `the object waited); the hop is a request's p50 on a route the Spot just left (one Message Follow ` +
      `relay) minus a direct one, over ${r.hopSamples} moves. Floor: the same hop in raw zeromq.js and no ZLink ` +
      `— a request through a relay process that passes it on unread to the server, which answers the caller ` +
      `straight, against one sent to the server directly, sampled the same way (three processes kept awake ` +
      `by a call every millisecond).`,
    '',
    '| metric | value |',
    '| --- | --- |',
    `| moves (aborted) | ${r.moves} (${r.aborted}) |`,
    `| pause p50 / p99 / max ms | ${r.pauseMs.p50.toFixed(2)} / ${r.pauseMs.p99.toFixed(2)} / ${r.pauseMs.max.toFixed(2)} |`,
    `| relocate() p50 / p99 ms (client) | ${r.relocateMs.p50.toFixed(2)} / ${r.relocateMs.p99.toFixed(2)} |`,
    `| req/s without moves | ${n(r.baselineReqPerSec)} |`,
    `| req/s over the run with moves | ${n(r.movingReqPerSec)} |`,
    `| req/s while a move is in progress (dip) | ${n(r.duringMoveReqPerSec)} (${(dip * 100).toFixed(0)} % below) |`,
    `| failed calls | ${r.failed} |`,
    `| one follow hop (p50 detour − p50 direct) µs | ${(r.detourP50Us - r.directP50Us).toFixed(1)} (${r.detourP50Us.toFixed(1)} − ${r.directP50Us.toFixed(1)}) |`,
    `| the same hop in raw zeromq.js (the floor) µs | ${(r.rawDetourP50Us - r.rawDirectP50Us).toFixed(1)} (${r.rawDetourP50Us.toFixed(1)} − ${r.rawDirectP50Us.toFixed(1)}) |`,
    '',
    ...movePhasesMarkdown(r.phases),
    '| target | measured | threshold | result |',
    '| --- | --- | --- | --- |',
    ...relocationTargets(r).map(
      ([name, value, threshold, met]) => `| ${name} | ${value} | ${threshold} | ${met ? 'PASS' : 'FAIL'} |`,
    ),
    '',
  ];
}
