/**
 * Durable objects (issue 54 item 7; docs/performance.md#durable-objects): an object server and a client
 * process on an object mesh (Location Store: a private redis-server without persistence), the same
 * Spot class without `persist` and with it (every turn) on each State Store provider — a private
 * redis-server with `appendonly yes` and `appendfsync everysec`, and a database of the bench's own on the
 * shared PostgreSQL — side by side in one run, the columns interleaved (order rotating each rep):
 *
 * 1. pipelined calls (`depth` outstanding over `DURABLE_SPOTS` rooms per column, each call a turn that
 *    changes its room's state), then sequential ones on a second server (the rooms restored there);
 * 2. writes: how much the rows' versions grew, Redis's own time per script and CPU per write
 *    (`INFO`), PostgreSQL's `pg_stat_database` over the pipelined runs (read once the first server
 *    closed its pool, so every backend has reported);
 * 3. bytes per saved object (`MEMORY USAGE`, `used_memory`; `pg_total_relation_size`) after `actorCount`
 *    Actors per column were created and given a state;
 * 4. restore: that server stopped gracefully, a third one started, and every Actor got-or-created and
 *    read once from the client, `ACTOR_CONCURRENCY` at a time.
 */
import { join } from 'node:path';
import { requirePrivateRedis } from '../sample/private-redis.js';
import { encodePayload } from '../lib/core/wire/index.js';
import { postgresUrl } from '../scripts/system-deps.mjs';
import { BenchChild } from './children.js';
import { measureCpuLoad } from './cpu-load.js';
import { perCall } from './live-system.js';
import { log } from './log.js';
import { StatePostgres, StateRedis, rowKeys } from './durable-stores.js';
import {
  type ActorsFigures,
  type DurableRun,
  type DurableRuns,
  type DurableSection,
  type PostgresCounts,
  type RowBytes,
  summarizeDurable,
} from './durable-report.js';
import type { RunCommand, WorkloadName, WorkloadResult } from './workload/protocol.js';
import {
  type ActorsCommand,
  type ActorsResult,
  DURABLE_SPOTS,
  type DurableStoresEnv,
  type DurableTarget,
  POSTGRES_POOL_SIZE,
  actorId,
  benchState,
  durableProviders,
  durableStoresEnv,
  postgresTable,
  redisPrefix,
  spotId,
} from './systems/zlink-durable.js';

const STARTUP_TIMEOUT_MS = 60_000;
/** A stop saves and releases every object the server holds: tens of thousands here. */
const CLOSE_TIMEOUT_MS = 180_000;
const ACTORS_TIMEOUT_MS = 600_000;
const STOP_GRACE_MS = 5_000;
const ACTOR_CONCURRENCY = 64;
/** Actors per column saved and restored, unmeasured, before the measured ones (the JIT, the routes). */
const ACTOR_WARMUP = 256;
/** Saved Actors sampled for `MEMORY USAGE`. */
const MEMORY_SAMPLE = 200;

export interface DurableSettings {
  readonly repMs: number;
  readonly reps: number;
  readonly warmupMs: number;
  readonly depth: number;
  /** Of `sequential` and `pipelined`, those to run (`--workloads`). */
  readonly workloads: readonly WorkloadName[];
  /** `--quick`: 1,000 saved Actors per column instead of 10,000. */
  readonly quick: boolean;
}

/** An object server and the client. */
type Pair = readonly [BenchChild, BenchChild];

/** The processes and stores of one run of the part. */
interface Bench {
  readonly dir: string;
  readonly settings: DurableSettings;
  readonly env: Record<string, string>;
  readonly stores: DurableStoresEnv;
  readonly redis: StateRedis;
  readonly postgres: StatePostgres | undefined;
  readonly targets: DurableTarget[];
  readonly children: BenchChild[];
}

export async function runDurable(
  dir: string,
  settings: DurableSettings,
): Promise<DurableSection | { error: string }> {
  const cpuLoad = measureCpuLoad();
  const children: BenchChild[] = [];
  const cleanup: (() => Promise<void>)[] = [];
  let runs: Omit<DurableRuns, 'cpuLoad'>;
  try {
    const location = await requirePrivateRedis();
    cleanup.push(() => location.stop());
    const redis = await StateRedis.start();
    cleanup.push(() => redis.stop());
    const pg = await StatePostgres.start(postgresUrl());
    const postgres = 'skipped' in pg ? undefined : pg;
    const skipped = 'skipped' in pg ? `PostgreSQL not run: ${pg.skipped}` : '';
    if (postgres) cleanup.push(() => postgres.drop());
    else log(`durable: ${skipped}`);
    const env = {
      BENCH_REDIS_URL: location.url,
      BENCH_KEY_PREFIX: `zlink-bench-durable-${process.pid}`,
      BENCH_STATE_REDIS_URL: redis.url,
      BENCH_STATE_KEY_PREFIX: `zlink-bench-state-${process.pid}`,
      BENCH_POSTGRES_URL: postgres?.url ?? '',
      BENCH_POSTGRES_TABLE: 'zlink_bench_state',
    };
    const stores = durableStoresEnv(env);
    const targets: DurableTarget[] = ['none', ...durableProviders(stores)];
    runs = await measure(
      { dir, settings, env, stores, redis, postgres, targets, children },
      {
        redis: `a private redis-server ${redis.version} (appendonly yes, appendfsync everysec)`,
        postgres: postgres
          ? `the shared PostgreSQL ${postgres.version} (synchronous_commit ${postgres.synchronousCommit}), a database of the bench's own`
          : skipped,
      },
    );
  } catch (error) {
    return { error: String((error as Error)?.message ?? error) };
  } finally {
    for (const child of children.reverse()) await child.stop(STOP_GRACE_MS);
    for (const step of cleanup.reverse())
      await step().catch((e: unknown) => log(`durable cleanup: ${String(e)}`));
  }
  const load = cpuLoad();
  return summarizeDurable({ ...runs, ...(load && { cpuLoad: load }) });
}

async function measure(b: Bench, described: DurableRuns['stores']): Promise<Omit<DurableRuns, 'cpuLoad'>> {
  const { settings, targets } = b;
  const actorCount = settings.quick ? 1000 : 10_000;
  const client = child(b, 'durable client', 'zlink-durable-client.js');
  // The first server: the pipelined runs, and PostgreSQL's counts over them (read once it closed its pool).
  let server = await startServer(b, 'bench-durable-1');
  await client.next('ready', STARTUP_TIMEOUT_MS);
  const pgBefore = b.postgres && { counters: await b.postgres.counters(), own: b.postgres.ownStatements };
  await rooms(client);
  const runs = await reps(b, [server, client], 'pipelined');
  const pgWrites = b.postgres && (await roomVersions(b, 'postgres'));
  await closeServer(server);
  let postgresCounts: PostgresCounts | undefined;
  if (b.postgres && pgBefore && runs.length > 0) {
    const after = await b.postgres.counters();
    postgresCounts = {
      statements: after.xactCommit - pgBefore.counters.xactCommit - (b.postgres.ownStatements - pgBefore.own),
      tupUpdated: after.tupUpdated - pgBefore.counters.tupUpdated,
      writes: pgWrites ?? 0,
    };
  }
  // The second: sequential runs on the rooms it restores, then the Actors saved and measured in the stores.
  server = await startServer(b, 'bench-durable-2');
  await rooms(client);
  runs.push(...(await reps(b, [server, client], 'sequential')));
  const { fills, bytes } = await saveActors(b, client, actorCount);
  const objectsAtStop = (actorCount + ACTOR_WARMUP + DURABLE_SPOTS) * targets.length;
  const stopMs = await closeServer(server);
  log(`durable: the server holding ${objectsAtStop} objects stopped in ${(stopMs / 1000).toFixed(1)} s`);
  // The third: every Actor comes back from its store.
  server = await startServer(b, 'bench-durable-3');
  for (const t of targets) await actors(client, 'restore', t, actorCount, ACTOR_WARMUP);
  const actorFigures: Partial<Record<DurableTarget, ActorsFigures>> = {};
  for (const t of targets)
    actorFigures[t] = {
      fill: fills[t] as ActorsResult,
      restore: await actors(client, 'restore', t, 0, actorCount),
    };
  await closeServer(server);
  return {
    stores: described,
    providers: targets.filter((t) => t !== 'none'),
    stateBytes: {
      rooms: encodePayload(benchState(spotId('redis', DURABLE_SPOTS - 1), 5000)).length,
      players: encodePayload(benchState(actorId('redis', actorCount - 1), actorCount - 1)).length,
    },
    spots: DURABLE_SPOTS,
    depth: settings.depth,
    reps: settings.reps,
    repMs: settings.repMs,
    postgresPoolSize: POSTGRES_POOL_SIZE,
    runs,
    ...(postgresCounts && { postgresCounts }),
    actorCount,
    actorConcurrency: ACTOR_CONCURRENCY,
    actors: actorFigures,
    bytes,
    stopMs,
    objectsAtStop,
  };
}

/**
 * Unmeasured Actors beyond the measured ones first (restored first on the next server, too), then
 * `count` Actors per target, each given its state, and the bytes each store then holds per row.
 */
async function saveActors(
  b: Bench,
  client: BenchChild,
  count: number,
): Promise<{ fills: Partial<Record<DurableTarget, ActorsResult>>; bytes: RowBytes }> {
  for (const t of b.targets) await actors(client, 'fill', t, count, ACTOR_WARMUP);
  const fills: Partial<Record<DurableTarget, ActorsResult>> = {};
  let redis: RowBytes['redis'];
  let postgres: RowBytes['postgres'];
  for (const t of b.targets) {
    const before = t === 'redis' ? (await b.redis.counters()).usedMemory : 0;
    fills[t] = await actors(client, 'fill', t, 0, count);
    if (t === 'redis') {
      const usedMemoryPerRow = ((await b.redis.counters()).usedMemory - before) / count;
      const sample = Array.from({ length: Math.min(MEMORY_SAMPLE, count) }, (_, i) =>
        actorId('redis', Math.floor((i * count) / MEMORY_SAMPLE)),
      );
      const prefix = redisPrefix(b.stores, 'players');
      const memoryUsage = await b.redis.memoryUsage(prefix, rowKeys('actor', sample));
      redis = { memoryUsage, usedMemoryPerRow, sampled: sample.length };
    } else if (t === 'postgres' && b.postgres) {
      postgres = await b.postgres.bytesPerRow(postgresTable(b.stores, 'players'));
    }
  }
  return { fills, bytes: { ...(redis && { redis }), ...(postgres && { postgres }) } };
}

/**
 * `workload` on every target: an unmeasured warm-up each, then the reps, the targets' order rotating each
 * rep; none when `--workloads` leaves it out.
 */
async function reps(b: Bench, pair: Pair, workload: WorkloadName): Promise<DurableRun[]> {
  const { settings, targets } = b;
  const runs: DurableRun[] = [];
  if (!settings.workloads.includes(workload)) return runs;
  for (const t of targets) await run(b, pair, t, workload, settings.warmupMs, 0);
  for (let rep = 0; rep < settings.reps; rep++)
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(i + rep) % targets.length] as DurableTarget;
      runs.push(await run(b, pair, t, workload, settings.repMs, rep + 1));
    }
  return runs;
}

function child(b: Bench, name: string, script: string, extra: Record<string, string> = {}): BenchChild {
  const started = new BenchChild(name, join(b.dir, script), { env: { ...b.env, ...extra } });
  b.children.push(started);
  return started;
}

async function startServer(b: Bench, rid: string): Promise<BenchChild> {
  const server = child(b, `durable server ${rid}`, 'zlink-durable-server.js', { BENCH_RID: rid });
  await server.next('ready', STARTUP_TIMEOUT_MS);
  return server;
}

/** A graceful stop (every object's state saved, its record released), timed in the server; then its exit. */
async function closeServer(server: BenchChild): Promise<number> {
  server.command({ type: 'close' });
  const { ms } = await server.next('closed', CLOSE_TIMEOUT_MS);
  await server.stop(STOP_GRACE_MS);
  return ms as number;
}

/** Get-or-create of every target's rooms (after a restart: their restore). */
async function rooms(client: BenchChild): Promise<void> {
  client.command({ type: 'rooms' });
  await client.next('rooms', STARTUP_TIMEOUT_MS);
}

/** Σ version of a target's rooms: the writes they took so far. */
async function roomVersions(b: Bench, target: DurableTarget): Promise<number | undefined> {
  if (target === 'redis') {
    const ids = Array.from({ length: DURABLE_SPOTS }, (_, i) => spotId(target, i));
    return b.redis.versions(redisPrefix(b.stores, 'rooms'), rowKeys('spot', ids));
  }
  if (target === 'postgres' && b.postgres) return b.postgres.versions(postgresTable(b.stores, 'rooms'));
  return undefined;
}

/** One run of `workload` on `target`'s rooms for `ms`, with the writes it made and Redis's cost of them. */
async function run(
  b: Bench,
  [server, client]: Pair,
  target: DurableTarget,
  workload: WorkloadName,
  ms: number,
  rep: number,
): Promise<DurableRun> {
  const redisRun = target === 'redis' && workload === 'pipelined';
  const before = await roomVersions(b, target);
  if (redisRun) await b.redis.resetStats();
  const counters = redisRun ? await b.redis.counters() : undefined;
  const both = async (type: string, reply: string) => {
    for (const p of [server, client]) p.command({ type });
    return Promise.all([server, client].map((p) => p.next(reply, STARTUP_TIMEOUT_MS)));
  };
  await both('cost-start', 'costing');
  const command: RunCommand = {
    type: 'run',
    target,
    workload,
    durationMs: ms,
    warmupMs: 0,
    depth: b.settings.depth,
    burst: 1,
  };
  client.command({ ...command });
  const measured = (await client.next('result', 30_000 + 2 * ms)).result as WorkloadResult;
  const [serverCost, clientCost] = await both('cost-stop', 'cost');
  const result = { ...measured, cost: perCall(measured, clientCost?.cost, serverCost?.cost) };
  const cpuUs = counters && (await b.redis.counters()).cpuUs - counters.cpuUs;
  const scripts = redisRun ? await b.redis.scripts() : undefined;
  const after = await roomVersions(b, target);
  const writes = before === undefined || after === undefined ? undefined : after - before;
  const out: DurableRun = {
    target,
    workload,
    rep,
    result,
    ...(writes !== undefined && { writes }),
    ...(scripts &&
      cpuUs !== undefined &&
      writes && {
        // A batch is one EVALSHA on a single Redis: Redis's script time over the rows it wrote.
        redis: { evalshaUs: (scripts.calls * scripts.usecPerCall) / writes, cpuUsPerWrite: cpuUs / writes },
      }),
  };
  if (rep > 0)
    log(`[${rep}/${b.settings.reps}] durable ${workload.padEnd(10)} ${target.padEnd(8)} ${describe(out)}`);
  return out;
}

function describe(r: DurableRun): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const res = r.result;
  const rate =
    res.workload === 'sequential'
      ? `${n(res.reqPerSec)} req/s, p50 ${res.p50Us.toFixed(1)} µs, p99 ${res.p99Us.toFixed(1)} µs`
      : `${n(res.workload === 'pipelined' ? res.reqPerSec : 0)} req/s`;
  const cpu = res.cost
    ? `, CPU µs/call ${res.cost.client.cpuUs.toFixed(1)} + ${res.cost.server.cpuUs.toFixed(1)}`
    : '';
  const writes = r.writes === undefined ? '' : `, ${n(r.writes)} writes`;
  const redis = r.redis
    ? `, EVALSHA ${r.redis.evalshaUs.toFixed(1)} µs/write, Redis CPU ${r.redis.cpuUsPerWrite.toFixed(1)} µs/write`
    : '';
  return `${rate}${cpu}${writes}${redis}`;
}

/** `fill` or `restore` of the Actors `from` .. `from + count - 1` of `target`, from the client. */
async function actors(
  client: BenchChild,
  type: ActorsCommand['type'],
  target: DurableTarget,
  from: number,
  count: number,
): Promise<ActorsResult> {
  const command: ActorsCommand = { type, target, from, count, concurrency: ACTOR_CONCURRENCY };
  client.command({ ...command });
  const result = (await client.next('actors', ACTORS_TIMEOUT_MS)).result as ActorsResult;
  log(
    `durable ${type} ${target}${from > 0 ? ' (warm-up)' : ''}: ${count} Actors in ${(result.ms / 1000).toFixed(1)} s ` +
      `(${Math.round((count * 1000) / result.ms)}/s), ${result.failed} failed, ${result.mismatched} not as set` +
      (result.errors.length > 0 ? `; ${result.errors[0]}` : ''),
  );
  return result;
}
