/**
 * Durable objects between real processes (issue 54; docs/objects.md#durable-objects), on each State Store
 * provider: two object servers and a client (test/fixtures/e2e/durable-node.app.ts), a private
 * redis-server for the Location Store, and the State Store — a private redis-server, or a table of the
 * shared PostgreSQL — behind a TCP proxy the test can cut.
 *
 * - An every-turn owner SIGKILLed under traffic: after the takeover, every `add` a caller heard back from
 *   is in the restored state (0 lost), none twice, each caller's in order.
 * - An explicit owner SIGKILLed: the restored state is exactly what its last save held.
 * - An owner SIGSTOPped past its lease, taken over, written by the new owner, then SIGCONTed: the old one
 *   ends its object (`takenOver`) and the new owner's writes stand.
 * - The State Store cut off: turns end StateNotSaved (never `ok`), new ones are refused, and once it is
 *   back the object takes calls again with every acknowledged turn kept.
 * Every count comes from the processes' own replies and logs.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { RedisServer } from '../helpers/redis-server.js';
import { RecordingProxy } from '../helpers/tcp-proxy.js';
import { adminPool, freshName, postgresPort, postgresUrlWith } from '../helpers/postgres.js';
import type { AddResult } from '../fixtures/e2e/durable-node.app.js';

const APP = 'e2e/durable-node.app.js';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Where a suite's State Store lives: its server, and the `stateStores.main` entry pointing through `port`. */
interface Provider {
  readonly name: string;
  start(): Promise<{ port: number; entry: (port: number) => Record<string, unknown>; stop(): Promise<void> }>;
}

const PROVIDERS: Provider[] = [
  {
    name: 'Redis',
    async start() {
      const redis = await RedisServer.start();
      return {
        port: redis.port,
        entry: (port) => ({ redis: `redis://127.0.0.1:${port}`, keyPrefix: 'durable-e2e' }),
        stop: () => redis.stop(),
      };
    },
  },
  {
    name: 'PostgreSQL',
    async start() {
      // The shared server, a table of this test's own (dropped after it).
      const table = freshName('zlink_durable_e2e');
      return {
        port: postgresPort(),
        entry: (port) => ({ postgres: { connectionString: postgresUrlWith({ port }), table } }),
        async stop() {
          const admin = adminPool();
          await admin.query(`DROP TABLE IF EXISTS ${table}`);
          await admin.end();
        },
      };
    },
  },
];

/** The processes of one test, its Location Store Redis and its State Store behind a proxy. */
class DurableCluster {
  readonly apps: ChildApp[] = [];

  private constructor(
    readonly location: RedisServer,
    readonly proxy: RecordingProxy,
    private readonly state: {
      port: number;
      entry: (port: number) => Record<string, unknown>;
      stop(): Promise<void>;
    },
  ) {}

  static async start(provider: Provider): Promise<DurableCluster> {
    const location = await RedisServer.start();
    const state = await provider.start();
    const proxy = await RecordingProxy.start({ target: state.port });
    return new DurableCluster(location, proxy, state);
  }

  async node(rid: string, role: 'server' | 'client'): Promise<ChildApp> {
    const app = new ChildApp(rid, APP, {
      rid,
      role,
      redisUrl: this.location.url,
      keyPrefix: 'durable',
      stateStore: this.state.entry(this.proxy.port),
    });
    this.apps.push(app);
    await app.next('ready', 30000);
    return app;
  }

  /** Two servers and a client, every one a ready peer of the others. */
  async trio(): Promise<[ChildApp, ChildApp, ChildApp]> {
    const s1 = await this.node('s1', 'server');
    const s2 = await this.node('s2', 'server');
    const c1 = await this.node('c1', 'client');
    await Promise.all([s1, s2, c1].map((app) => app.call({ type: 'waitPeers', count: 2 }, 30000)));
    return [s1, s2, c1];
  }

  /** The store cannot be reached: new connections refused, the ones open now cut. */
  cutStore(): void {
    this.proxy.target = undefined;
    this.proxy.cut();
  }

  /** The store can be reached again. */
  restoreStore(): void {
    this.proxy.target = this.state.port;
  }

  async close(): Promise<void> {
    for (const app of this.apps) {
      app.kill('SIGCONT');
      app.kill('SIGKILL');
    }
    await Promise.all(this.apps.map((app) => app.exited));
    await this.proxy.close();
    await this.state.stop();
    await this.location.stop();
  }
}

async function getOrCreate(
  app: ChildApp,
  actorType: string,
  ids: string[],
  node?: string,
): Promise<Record<string, { rid?: string; outcome?: string }>> {
  const reply = await app.call({ type: 'getOrCreate', actorType, ids, node, concurrency: 8 }, 30000);
  return reply.refs as Record<string, { rid?: string; outcome?: string }>;
}

async function call(app: ChildApp, ids: string[], packet: string, payload: unknown = null) {
  const reply = await app.call({ type: 'call', ids, packet, payload }, 30000);
  return reply.answers as Record<string, { ok?: unknown; outcome?: string; reason?: unknown }>;
}

/** The ops each Actor of `ids` holds now, read through `app`. */
async function states(app: ChildApp, ids: string[]): Promise<Record<string, string[]>> {
  const answers = await call(app, ids, 'read');
  const out: Record<string, string[]> = {};
  for (const id of ids) {
    const a = answers[id];
    if (a?.ok === undefined) throw new Error(`read ${id}: ${JSON.stringify(a)}`);
    out[id] = a.ok as string[];
  }
  return out;
}

/** Takes over `ids` once the dead owner's lease lapsed (3 s here): get-or-create until every one is Ready. */
async function takeOver(app: ChildApp, actorType: string, ids: string[], node: string): Promise<void> {
  for (let i = 0; ; i++) {
    const refs = await getOrCreate(app, actorType, ids, node);
    const missing = ids.filter((id) => refs[id]?.rid !== node);
    if (missing.length === 0) return;
    if (i >= 40) throw new Error(`not taken over: ${JSON.stringify(missing.map((id) => refs[id]))}`);
    await sleep(250);
  }
}

/** What a load's results and the states say went wrong: every list empty when all is well. */
function check(results: AddResult[], held: Record<string, string[]>) {
  const lost = results
    .filter((r) => r.outcome === 'ok' && !(held[r.id] ?? []).includes(r.op))
    .map((r) => r.op);
  const twice: string[] = [];
  const outOfOrder: string[] = [];
  for (const [id, ops] of Object.entries(held)) {
    if (new Set(ops).size !== ops.length) twice.push(id);
    // Op ids are `<rid>/<tag>/<id>/<n>`: within one load (tag), n grows with each caller's order.
    const last = new Map<string, number>();
    for (const op of ops) {
      const [, tag = '', , n = ''] = op.split('/');
      if ((last.get(tag) ?? -1) >= Number(n)) outOfOrder.push(op);
      last.set(tag, Number(n));
    }
  }
  return { lost, twice, outOfOrder };
}

const IDS = Array.from({ length: 8 }, (_, i) => `ledger-${i}`);

describe.each(PROVIDERS)('durable objects between processes on $name', (provider) => {
  let cluster: DurableCluster | undefined;
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  it('every turn: an owner SIGKILLed under traffic loses no acknowledged turn', async () => {
    cluster = await DurableCluster.start(provider);
    const [s1, s2, c1] = await cluster.trio();
    expect(Object.values(await getOrCreate(c1, 'ledger', IDS, 's1')).every((r) => r.rid === 's1')).toBe(true);
    c1.send({ type: 'load', tag: 'k', ids: IDS, progressAt: 400 });
    await c1.next('progress', 30000);
    s1.kill('SIGKILL');
    await sleep(300);
    c1.send({ type: 'stop', tag: 'k' });
    const results = (await c1.next('load', 30000)).results as AddResult[];
    const acked = results.filter((r) => r.outcome === 'ok').length;
    expect(acked).toBeGreaterThanOrEqual(400);

    await takeOver(c1, 'ledger', IDS, 's2');
    const held = await states(c1, IDS);
    expect(check(results, held)).toEqual({ lost: [], twice: [], outOfOrder: [] });
    process.stdout.write(`${provider.name}: SIGKILL under load: ${acked} adds acknowledged, 0 lost\n`);
    // Every Actor came back with state: restored on s2, from the versions s1 wrote.
    await s2.call({ type: 'sync' });
    const restored = new Set(s2.logs.filter((m) => m.e === 'restored').map((m) => m.id));
    expect([...restored].sort()).toEqual([...IDS].sort());
  });

  it('explicit: an owner SIGKILLed comes back with exactly what its last save held', async () => {
    cluster = await DurableCluster.start(provider);
    const [s1, , c1] = await cluster.trio();
    const ids = ['book-1', 'book-2'];
    await getOrCreate(c1, 'notebook', ids, 's1');
    for (const n of [1, 2, 3]) await call(c1, ids, 'add', `a${n}`);
    expect(Object.values(await call(c1, ids, 'save')).map((a) => a.ok)).toEqual([
      expect.objectContaining({ saved: 3 }),
      expect.objectContaining({ saved: 3 }),
    ]);
    for (const n of [4, 5]) await call(c1, ids, 'add', `a${n}`);
    s1.kill('SIGKILL');
    await takeOver(c1, 'notebook', ids, 's2');
    expect(await states(c1, ids)).toEqual({ 'book-1': ['a1', 'a2', 'a3'], 'book-2': ['a1', 'a2', 'a3'] });
  });

  it('an owner paused past its lease is fenced: the new owner keeps its state, the old one lets go', async () => {
    cluster = await DurableCluster.start(provider);
    const [s1, s2, c1] = await cluster.trio();
    const id = 'ledger-paused';
    await getOrCreate(c1, 'ledger', [id], 's1');
    c1.send({ type: 'load', tag: 'p', ids: [id], progressAt: 50 });
    await c1.next('progress', 30000);
    s1.kill('SIGSTOP');
    await sleep(300);
    c1.send({ type: 'stop', tag: 'p' });
    const before = (await c1.next('load', 30000)).results as AddResult[];

    await takeOver(c1, 'ledger', [id], 's2');
    const after = (await c1.call({ type: 'load', tag: 'q', ids: [id], count: 20 }, 30000))
      .results as AddResult[];
    expect(after.every((r) => r.outcome === 'ok')).toBe(true);
    s1.kill('SIGCONT');
    // The old owner learns it lost the object (its lease came back fenced, or the store fenced it).
    await s1.waitLog(
      (m: ChildMessage) => m.e === 'object' && m.id === id && m.state === 'deactivated',
      20000,
    );
    await sleep(500);
    const held = await states(c1, [id]);
    expect(check([...before, ...after], held)).toEqual({ lost: [], twice: [], outOfOrder: [] });
    expect(held[id]?.slice(-20)).toEqual(after.map((r) => r.op));
    await s2.call({ type: 'sync' });
  });

  it('the State Store cut off: no turn acknowledged unsaved, calls refused, then taken again', async () => {
    cluster = await DurableCluster.start(provider);
    const [, , c1] = await cluster.trio();
    const id = 'ledger-outage';
    await getOrCreate(c1, 'ledger', [id], 's1');
    const first = (await c1.call({ type: 'load', tag: 'a', ids: [id], count: 10 }, 30000))
      .results as AddResult[];
    expect(first.every((r) => r.outcome === 'ok')).toBe(true);

    cluster.cutStore();
    const during = (await c1.call({ type: 'load', tag: 'b', ids: [id], count: 6 }, 60000))
      .results as AddResult[];
    // Not one is acknowledged: the first ends StateNotSaved (it ran), the rest are refused (never ran).
    expect(during.filter((r) => r.outcome === 'ok')).toEqual([]);
    const ends = during.map((r) => `${r.outcome} ${String(r.reason)}`);
    expect(ends).toContain('RemoteError stateNotSaved');
    expect(ends).toContain('Rejected stateNotSaved');

    cluster.restoreStore();
    let back: AddResult[] = [];
    for (let i = 0; i < 50 && !back.some((r) => r.outcome === 'ok'); i++) {
      back = (await c1.call({ type: 'load', tag: `c${i}`, ids: [id], count: 1 }, 30000))
        .results as AddResult[];
      if (!back.some((r) => r.outcome === 'ok')) await sleep(200);
    }
    expect(back.some((r) => r.outcome === 'ok')).toBe(true);
    const held = await states(c1, [id]);
    expect(check([...first, ...during, ...back], held).lost).toEqual([]);
  });

  it('a rolling restart of three servers with default options: no NotFound, nothing acknowledged lost', async () => {
    cluster = await DurableCluster.start(provider);
    const rids = ['s1', 's2', 's3'];
    const live = new Map<string, ChildApp>();
    for (const rid of rids) live.set(rid, await cluster.node(rid, 'server'));
    const c1 = await cluster.node('c1', 'client');
    const peers = () =>
      Promise.all([...live.values(), c1].map((app) => app.call({ type: 'waitPeers', count: 3 }, 30000)));
    await peers();
    const ids = Array.from({ length: 6 }, (_, i) => `roll-${i}`);
    for (const [i, id] of ids.entries()) await getOrCreate(c1, 'ledger', [id], rids[i % 3]);
    c1.send({ type: 'load', tag: 'r', ids });
    for (const rid of rids) {
      const old = live.get(rid) as ChildApp;
      old.kill('SIGTERM');
      expect(await old.exited).toEqual({ code: null, signal: 'SIGTERM' });
      live.set(rid, await cluster.node(rid, 'server'));
      await peers();
    }
    c1.send({ type: 'stop', tag: 'r' });
    const results = (await c1.next('load', 60000)).results as AddResult[];
    expect(results.filter((r) => r.outcome === 'NotFound')).toEqual([]);
    const held = await states(c1, ids);
    expect(check(results, held)).toEqual({ lost: [], twice: [], outOfOrder: [] });
    expect(results.filter((r) => r.outcome === 'ok').length).toBeGreaterThan(100);
  }, 90000);

  it('10,000 objects put to sleep and brought back with their state', async () => {
    cluster = await DurableCluster.start(provider);
    const s1 = await cluster.node('s1', 'server');
    const c1 = await cluster.node('c1', 'client');
    await Promise.all([s1, c1].map((app) => app.call({ type: 'waitPeers', count: 1 }, 30000)));
    const set = await c1.call({ type: 'sleepers', prefix: 'z', count: 10_000 }, 120000);
    expect(set).toMatchObject({ matched: 10_000, misses: [] });
    let census = await s1.call({ type: 'census' });
    for (let i = 0; i < 120 && (census.activations as number) > 0; i++) {
      await sleep(500);
      census = await s1.call({ type: 'census' });
    }
    expect(census).toMatchObject({ activations: 0 });
    expect(census.passivated as number).toBeGreaterThanOrEqual(10_000);
    const read = await c1.call({ type: 'sleepers', prefix: 'z', count: 10_000, read: true }, 120000);
    expect(read).toMatchObject({ matched: 10_000, misses: [] });
    process.stdout.write(
      `${provider.name}: 10,000 sleepers created and set in ${String(set.ms)} ms, woken and read in ${String(read.ms)} ms\n`,
    );
  }, 300000);
});
