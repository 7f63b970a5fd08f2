/**
 * `npm run bench -- --scale` (issue 32 item 3): the figures a cluster is sized with, each on this
 * machine. Memory per idle Spot and Actor on one object server (heap and RSS after full collections,
 * and Redis's own memory, per object at two counts); memory per positive route-cache entry (one
 * cache filled in a process of its own); object creates per second against one Redis with 1, 4 and
 * 16 creations in flight, and relocations per second, each with Redis's own command count and CPU
 * time per operation (`INFO`); and a mesh of MeshNode processes: time until every node sees every
 * peer ready, idle CPU per node, and one Node direct request's latency across it.
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../sample/private-redis.js';
import { BenchChild } from './children.js';
import { log } from './log.js';
import { type RedisCounters, commandsPerOp, redisCounters, redisDelta } from './redis-info.js';
import { median } from './workload/stats.js';
import type { CreateCommand, CreateResult, MemoryReading, RelocateResult } from './systems/zlink-scale.js';
import { SCALE_SERVERS } from './systems/zlink-scale.js';
import type { MeshScale, ObjectMemory, RateRow, ScaleSection } from './scale-report.js';

const STARTUP_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
/** Generous: 100k creates on a loaded two-core machine. */
const CREATE_TIMEOUT_MS = 900_000;
const GC = ['--expose-gc'];

interface ScaleSizes {
  readonly objectCounts: readonly [number, number];
  readonly routeCacheEntries: number;
  readonly createsPerStep: number;
  readonly relocateMs: number;
  readonly meshNodes: number;
  readonly idleMs: number;
  readonly latencySamples: number;
}

const FULL: ScaleSizes = {
  objectCounts: [10_000, 100_000],
  routeCacheEntries: 1_000_000,
  createsPerStep: 3000,
  relocateMs: 5000,
  meshNodes: 16,
  idleMs: 10_000,
  latencySamples: 2000,
};

const QUICK: ScaleSizes = {
  objectCounts: [1000, 5000],
  routeCacheEntries: 100_000,
  createsPerStep: 300,
  relocateMs: 1000,
  meshNodes: 4,
  idleMs: 2000,
  latencySamples: 300,
};

export async function runScale(dir: string, quick: boolean): Promise<ScaleSection | { error: string }> {
  const sizes = quick ? QUICK : FULL;
  const privateRedis = await startPrivateRedis();
  if (!privateRedis) return { error: 'the scale part needs redis-server on PATH (it counts its commands)' };
  const redis = new Redis(privateRedis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const children: BenchChild[] = [];
  const env = (prefix: string, extra: Record<string, string> = {}) => ({
    BENCH_REDIS_URL: privateRedis.url,
    BENCH_KEY_PREFIX: `zlink-bench-${prefix}-${process.pid}`,
    ...extra,
  });
  try {
    await redis.connect();
    const routeCache = await routeCacheMemory(dir, sizes.routeCacheEntries, children);
    const objects = await objectFigures(dir, sizes, redis, env('scale'), children);
    await stopAll(children);
    const mesh = await meshFigures(dir, sizes, env('scale-mesh'), children);
    return { store: `private redis-server (${privateRedis.url})`, routeCache, ...objects, mesh };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    await stopAll(children);
    redis.disconnect();
    await privateRedis.stop();
  }
}

async function stopAll(children: BenchChild[]): Promise<void> {
  for (const child of children.splice(0).reverse()) await child.stop(STOP_GRACE_MS);
}

async function routeCacheMemory(dir: string, entries: number, children: BenchChild[]) {
  const child = new BenchChild('route cache', join(dir, 'route-cache-memory.js'), {
    args: [String(entries)],
    execArgv: GC,
  });
  children.push(child);
  const { before, after } = (await child.next('route-cache', 300_000)) as unknown as {
    before: MemoryReading;
    after: MemoryReading;
  };
  const per = (a: number, b: number) => (b - a) / after.count;
  log(
    `scale: route cache ${after.count} entries, ${Math.round(per(before.heapUsed, after.heapUsed))} B heap each`,
  );
  return {
    entries: after.count,
    heapPerEntry: per(before.heapUsed, after.heapUsed),
    rssPerEntry: per(before.rss, after.rss),
  };
}

async function objectFigures(
  dir: string,
  sizes: ScaleSizes,
  redis: Redis,
  env: Record<string, string>,
  children: BenchChild[],
): Promise<Pick<ScaleSection, 'memory' | 'creates' | 'relocations'>> {
  const servers: BenchChild[] = [];
  for (const rid of SCALE_SERVERS) {
    const server = new BenchChild(rid, join(dir, 'zlink-scale-server.js'), {
      env: { ...env, BENCH_RID: rid },
      execArgv: GC,
    });
    children.push(server);
    servers.push(server);
    await server.next('ready', STARTUP_TIMEOUT_MS);
  }
  const client = new BenchChild('scale client', join(dir, 'zlink-scale-client.js'), { env });
  children.push(client);
  await client.next('ready', STARTUP_TIMEOUT_MS);
  const [holder] = servers as [BenchChild];
  const memoryOf = async (): Promise<MemoryReading> => {
    holder.command({ type: 'memory' });
    return (await holder.next('memory', 60_000)).reading as MemoryReading;
  };
  const create = async (c: Omit<CreateCommand, 'type'>): Promise<CreateResult> => {
    client.command({ type: 'create', ...c });
    const result = (await client.next('created', CREATE_TIMEOUT_MS)).result as CreateResult;
    if (result.failed > 0) throw new Error(`${result.failed} of ${c.count} creates of ${c.prefix} failed`);
    return result;
  };

  // Memory: the activations are all on the first server; nothing else happens meanwhile.
  const memory: ObjectMemory[] = [];
  for (const kind of ['spot', 'actor'] as const) {
    const base = await memoryOf();
    const redisBase = await redisCounters(redis);
    let made = 0;
    for (const count of sizes.objectCounts) {
      const result = await create({
        kind,
        prefix: `idle-${kind}`,
        from: made,
        count: count - made,
        node: SCALE_SERVERS[0],
        concurrency: 16,
      });
      made = count;
      const reading = await memoryOf();
      const store = redisDelta(redisBase, await redisCounters(redis));
      const objectsHeld = reading.count - base.count;
      memory.push({
        kind,
        count: objectsHeld,
        heapPerObject: (reading.heapUsed - base.heapUsed) / objectsHeld,
        rssPerObject: (reading.rss - base.rss) / objectsHeld,
        redisPerObject: store.usedMemory / objectsHeld,
        createsPerSec: result.created / (result.ms / 1000),
      });
      log(
        `scale: ${objectsHeld} idle ${kind}s, ${Math.round((reading.heapUsed - base.heapUsed) / objectsHeld)} B heap each`,
      );
    }
  }

  // Creates against the one Redis: the authority CAS, on the second server.
  const creates: RateRow[] = [];
  for (const concurrency of [1, 4, 16]) {
    const before = await redisCounters(redis);
    const result = await create({
      kind: 'spot',
      prefix: `create-${concurrency}`,
      from: 0,
      count: sizes.createsPerStep,
      node: SCALE_SERVERS[1],
      concurrency,
    });
    creates.push(
      rateRow(concurrency, result.created, result.ms, 0, redisDelta(before, await redisCounters(redis))),
    );
  }

  // Relocations: each lane one Spot, moved between the two servers as soon as its last move ended.
  await create({ kind: 'spot', prefix: 'move', from: 0, count: 16, node: SCALE_SERVERS[1], concurrency: 16 });
  const relocations: RateRow[] = [];
  for (const concurrency of [1, 16]) {
    const before = await redisCounters(redis);
    client.command({ type: 'relocate', prefix: 'move', concurrency, durationMs: sizes.relocateMs });
    const r = (await client.next('relocated', sizes.relocateMs + 120_000)).result as RelocateResult;
    const store = redisDelta(before, await redisCounters(redis));
    relocations.push(rateRow(concurrency, r.committed, r.ms, r.aborted + r.failed, store));
  }
  for (const row of [...creates, ...relocations])
    log(
      `scale: ${row.concurrency} in flight, ${Math.round(row.perSec)}/s, ${row.redisCommandsPerOp.toFixed(1)} Redis commands each`,
    );
  return { memory, creates, relocations };
}

function rateRow(
  concurrency: number,
  done: number,
  ms: number,
  failed: number,
  store: RedisCounters,
): RateRow {
  return {
    concurrency,
    done,
    perSec: done / (ms / 1000),
    failed,
    redisCommandsPerOp: done > 0 ? store.commands / done : 0,
    redisCommands: commandsPerOp(store, done),
    redisCpuUsPerOp: done > 0 ? store.cpuUs / done : 0,
  };
}

async function meshFigures(
  dir: string,
  sizes: ScaleSizes,
  env: Record<string, string>,
  children: BenchChild[],
): Promise<MeshScale> {
  const n = sizes.meshNodes;
  const rids = Array.from({ length: n }, (_, i) => `bench-scale-node-${i}`);
  const spawned = Date.now();
  const nodes = rids.map((rid) => {
    const node = new BenchChild(rid, join(dir, 'zlink-scale-mesh-node.js'), {
      env: { ...env, BENCH_RID: rid, BENCH_NODES: String(n) },
    });
    children.push(node);
    return node;
  });
  const started: number[] = [];
  const ready: number[] = [];
  for (const node of nodes) started.push((await node.next('started', STARTUP_TIMEOUT_MS * 2)).at as number);
  for (const node of nodes) ready.push((await node.next('peers', 150_000)).at as number);
  const lastStarted = Math.max(...started);
  const allReady = Math.max(...ready);
  log(
    `scale: ${n} mesh nodes, every one sees every peer ${allReady - lastStarted} ms after the last one started`,
  );
  // Idle: all of them measured over the same window.
  const idle = await Promise.all(
    nodes.map(async (node) => {
      node.command({ type: 'cpu', durationMs: sizes.idleMs });
      const m = await node.next('cpu', sizes.idleMs + 30_000);
      return ((m.cpuUs as number) / 1000 / (m.ms as number)) * 100;
    }),
  );
  const [first] = nodes as [BenchChild];
  first.command({ type: 'latency', to: rids[n - 1], samples: sizes.latencySamples });
  const latency = await first.next('latency', 120_000);
  return {
    nodes: n,
    spawnToAllReadyMs: allReady - spawned,
    lastStartToAllReadyMs: allReady - lastStarted,
    idleCpuPercentMedian: median(idle),
    idleCpuPercentMax: Math.max(...idle),
    requestP50Us: latency.p50Us as number,
    requestP99Us: latency.p99Us as number,
  };
}
