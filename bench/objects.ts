/**
 * Spots by global id next to ChannelName requests (issue 16 item 11): one object server process
 * (hosting the `bench` Spots and serving channel `bench`) and one client process on an object mesh
 * with discovery 'auto' through a Location Store on a private `redis-server`. The client's targets
 * run interleaved, the order rotating each repetition: `channel`, `spot` (routes cached) and `miss`
 * (a runtime with `routeCacheMaxAgeMs: 0`: one store read per call). Redis counts the store reads
 * of every measured run itself (`INFO commandstats`).
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../sample/private-redis.js';
import { BenchChild } from './children.js';
import { perCall } from './live-system.js';
import { log } from './log.js';
import { type BenchOptions, PROFILE_EXTENSION } from './options.js';
import type { BenchMessage, WorkloadName, WorkloadResult } from './workload/protocol.js';
import { BENCH_SPOTS } from './systems/zlink-objects.js';
import {
  OBJECT_TARGETS,
  OBJECT_WORKLOADS,
  type ObjectRun,
  type ObjectTarget,
  type ObjectsRuns,
} from './objects-report.js';

const STARTUP_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const STANDARD_REDIS = 'redis://127.0.0.1:6379';

const runTimeout = (durationMs: number): number => 10_000 + 2 * durationMs;

/** Redis's own count of store reads: script calls and GETs, as the Authority Store makes them. */
async function storeReads(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const name of ['evalsha', 'eval', 'get']) {
    const match = new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(info);
    calls += match ? Number(match[1]) : 0;
  }
  return calls;
}

function describe(result: WorkloadResult): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  if (result.workload === 'sequential')
    return `${n(result.reqPerSec)} req/s, p50 ${result.p50Us.toFixed(1)} µs, p99 ${result.p99Us.toFixed(1)} µs`;
  return result.workload === 'pipelined' ? `${n(result.reqPerSec)} req/s` : `${n(result.msgsPerSec)} msgs/s`;
}

/**
 * Runs the objects bench with the runner's settings (`repMs` per repetition); an error entry when
 * a process could not start or a run failed (the section is then left out, as fanout's is).
 */
export async function runObjects(
  dir: string,
  options: BenchOptions,
  repMs: number,
  profileDir: string,
): Promise<ObjectsRuns | { error: string }> {
  const privateRedis = await startPrivateRedis();
  const url = privateRedis?.url ?? STANDARD_REDIS;
  const store = privateRedis ? `private redis-server (${url})` : `redis on ${url} (no redis-server on PATH)`;
  const env = { BENCH_REDIS_URL: url, BENCH_KEY_PREFIX: `zlink-bench-${process.pid}` };
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let server: BenchChild | undefined;
  let client: BenchChild | undefined;
  try {
    await redis.connect();
    server = new BenchChild('objects server', join(dir, 'zlink-objects-server.js'), { env });
    await server.next('ready', STARTUP_TIMEOUT_MS);
    client = new BenchChild('objects client', join(dir, 'zlink-objects-client.js'), { env });
    await client.next('ready', STARTUP_TIMEOUT_MS);
    log(`objects: ${store}, server pid ${server.pid}, client pid ${client.pid}`);
    /** Both processes run a command (built per role), then report `reply`: [server's, client's]. */
    const both = async (command: (role: string) => BenchMessage, reply: string): Promise<BenchMessage[]> => {
      const roles = [
        ['server', server as BenchChild],
        ['client', client as BenchChild],
      ] as const;
      for (const [role, child] of roles) child.command(command(role));
      return Promise.all(roles.map(([, child]) => child.next(reply, STARTUP_TIMEOUT_MS)));
    };
    const measure = async (target: ObjectTarget, workload: WorkloadName, ms: number) => {
      const { depth, burst, idleMs } = options;
      (client as BenchChild).command({
        type: 'run',
        target,
        workload,
        durationMs: ms,
        warmupMs: 0,
        depth,
        burst,
        idleMs,
      });
      return (await (client as BenchChild).next('result', runTimeout(ms))).result as WorkloadResult;
    };
    const runs: ObjectRun[] = [];
    const workloads = OBJECT_WORKLOADS.filter((w) => options.workloads.includes(w));
    for (const workload of workloads)
      for (const target of OBJECT_TARGETS) await measure(target, workload, options.warmupMs);
    for (let rep = 0; rep < options.reps; rep++) {
      for (const workload of workloads) {
        const order = OBJECT_TARGETS.map((_, i) => OBJECT_TARGETS[(i + rep) % OBJECT_TARGETS.length]);
        for (const target of order as ObjectTarget[]) {
          const profile = rep === 0 ? options.profile : undefined;
          if (profile) await both(() => ({ type: 'profile-start', kind: profile }), 'profiling');
          const before = await storeReads(redis);
          await both(() => ({ type: 'cost-start' }), 'costing');
          const measured = await measure(target, workload, repMs);
          const [serverCost, clientCost] = await both(() => ({ type: 'cost-stop' }), 'cost');
          const result = { ...measured, cost: perCall(measured, clientCost?.cost, serverCost?.cost) };
          const reads = (await storeReads(redis)) - before;
          if (profile) {
            const file = (role: string) =>
              join(profileDir, `objects-${target}-${workload}-${role}${PROFILE_EXTENSION[profile]}`);
            await both((role) => ({ type: 'profile-stop', file: file(role) }), 'profiled');
          }
          runs.push({
            target,
            workload,
            rep: rep + 1,
            result,
            storeReads: reads,
          });
          const perRequest = (reads / (result.workload === 'oneway' ? result.sent : result.requests)).toFixed(
            3,
          );
          log(
            `[${rep + 1}/${options.reps}] ${workload.padEnd(10)} objects ${target.padEnd(8)} ` +
              `${describe(result)}, ${perRequest} store reads/request`,
          );
        }
      }
    }
    return { store, spots: BENCH_SPOTS, runs };
  } catch (error) {
    log(`objects FAILED: ${String((error as Error)?.message ?? error)}`);
    return { error: String((error as Error)?.message ?? error) };
  } finally {
    await client?.stop(STOP_GRACE_MS);
    await server?.stop(STOP_GRACE_MS);
    redis.disconnect();
    await privateRedis?.stop();
  }
}
