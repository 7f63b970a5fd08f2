/**
 * The Redis State Store (issue 54; lib/store/redis/redis-state-store.ts): the State Store contract on a
 * private redis-server, `n` handles each on its own connection under one fresh key prefix; then what is
 * Redis's own: the row as an operator reads it, rows it cannot read, start() against a Redis that is down,
 * stalled or evicts keys, a Redis killed between two writes, and what one batch costs the server.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ObjectKey, StateAdoptRequest, StateStore, StateWrite } from '../../../lib/core/index.js';
import { closeRedisClient } from '../../../lib/store/redis/client.js';
import { RedisStateStore, type RedisStateStoreOptions } from '../../../lib/store/redis/redis-state-store.js';
import { stateRowKey } from '../../../lib/store/redis/state-keys.js';
import { Cleanup, freePort, outcome } from '../../helpers/index.js';
import { RedisServer } from '../../helpers/redis-server.js';
import { useRedis } from './fixtures.js';
import { stateStoreContract } from './state-store-contract.js';

const redis = useRedis();

let prefixes = 0;
/** A key prefix no other test uses. */
const freshPrefix = () => `state-${process.pid}-${++prefixes}`;
/** The key prefix of each handle the contract opened, for `corrupt`. */
const prefixOf = new WeakMap<StateStore, string>();

/** Runs `op` on a plain client of `server`, closed after. */
async function onServer<T>(
  server: RedisServer,
  op: (client: ReturnType<RedisServer['client']>) => Promise<T>,
): Promise<T> {
  const client = server.client();
  try {
    return await op(client);
  } finally {
    await closeRedisClient(client);
  }
}

stateStoreContract({
  name: 'RedisStateStore',
  handles: (n, { tombstoneTtlMs }) => {
    const keyPrefix = freshPrefix();
    return Array.from({ length: n }, () => {
      const store = new RedisStateStore({
        redis: redis.current.url,
        keyPrefix,
        tombstoneTtlMs,
        name: 'contract',
      });
      prefixOf.set(store, keyPrefix);
      return store;
    });
  },
  corrupt: async (store, key) => {
    await onServer(redis.current, (c) =>
      c.hset(stateRowKey(prefixOf.get(store)!, key), 'epoch', 'not-a-number'),
    );
  },
});

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const NODE = { rid: 'node-a', nodeGeneration: 'g1' };
let ids = 0;
const freshKey = (): ObjectKey => ({ mesh: 'game', kind: 'actor', id: `p:${process.pid}-${++ids}` });
const claim = (key: ObjectKey, objectGeneration = 1): StateAdoptRequest => ({
  key,
  type: 'player',
  objectGeneration,
  owner: NODE,
});
const save = (
  key: ObjectKey,
  epoch: number,
  expected: number,
  extra: Partial<StateWrite> = {},
): StateWrite => ({
  key,
  type: 'player',
  epoch,
  expected,
  schemaVersion: 1,
  state: Uint8Array.of(0, 255, 1),
  timers: undefined,
  authority: { objectGeneration: 1, authorityOwnerGeneration: 3, rid: 'node-a' },
  ...extra,
});

/** A started store on the file's Redis (or `options.redis`), closed after the test. */
async function started(options: Partial<RedisStateStoreOptions> = {}): Promise<RedisStateStore> {
  const store = cleanup.add(
    new RedisStateStore({ redis: redis.current.url, keyPrefix: freshPrefix(), ...options }),
  );
  await store.start();
  return store;
}

describe('RedisStateStore options', () => {
  it('names itself by its name, where Redis is and its prefix, never a password', () => {
    const named = (options: RedisStateStoreOptions) => cleanup.add(new RedisStateStore(options)).name;
    expect(named({ redis: 'redis://:s3cret@127.0.0.1:6379', name: 'players' })).toBe(
      "State Store 'players' (Redis 127.0.0.1:6379 prefix zlink-state)",
    );
    expect(named({ redis: { host: '10.0.0.7', port: 6380 }, keyPrefix: 'game-state' })).toBe(
      "State Store 'redis' (Redis 10.0.0.7:6380 prefix game-state)",
    );
    expect(
      named({ cluster: { nodes: [{ host: '10.0.0.1', port: 7000 }, '10.0.0.2:7000'] }, name: 'rooms' }),
    ).toBe("State Store 'rooms' (Redis cluster 10.0.0.1:7000,10.0.0.2:7000 prefix zlink-state)");
  });

  it.each<[string, Partial<RedisStateStoreOptions>]>([
    ['name', { name: '' }],
    ['keyPrefix', { keyPrefix: 'state{1}' }],
    ['keyPrefix', { keyPrefix: '' }],
    ['tombstoneTtlMs', { tombstoneTtlMs: 0 }],
    ['startTimeoutMs', { startTimeoutMs: 1.5 }],
  ])('refuses a bad %s, Configuration naming it', (option, bad) => {
    expect(() => new RedisStateStore({ redis: 'redis://127.0.0.1:6379', ...bad })).toThrow(
      expect.objectContaining({
        code: 'Configuration',
        message: expect.stringContaining(`RedisStateStore options.${option}`),
      }),
    );
  });
});

describe('RedisStateStore rows in Redis', () => {
  it('one hash an operator can read: integers as decimal text, state and timers as their bytes', async () => {
    const store = await started({ keyPrefix: 'ops-state' });
    const key = { mesh: 'game:eu', kind: 'actor', id: `p:${process.pid}/é` } as const;
    await store.adopt([claim(key)]);
    await store.write([save(key, 1, 0, { timers: Uint8Array.of(9) })]);
    const rowKey = `ops-state:game%3Aeu:actor:p%3A${process.pid}%2F%C3%A9`;
    expect(stateRowKey('ops-state', key)).toBe(rowKey);
    const row = await onServer(redis.current, (c) => c.hgetallBuffer(rowKey));
    const asText = Object.fromEntries(
      Object.entries(row)
        .filter(([f]) => f !== 'state' && f !== 'timers')
        .map(([f, v]) => [f, v.toString()]),
    );
    expect(asText).toEqual({
      type: 'player',
      epoch: '1',
      version: '1',
      schemaVersion: '1',
      objectGeneration: '1',
      authorityOwnerGeneration: '3',
      owner: 'node-a',
      savedAt: expect.stringMatching(/^\d{13}$/),
    });
    expect(Math.abs(Number(asText.savedAt) - Date.now())).toBeLessThan(5000);
    expect([row.state, row.timers]).toEqual([Buffer.of(0, 255, 1), Buffer.of(9)]);
    expect(await onServer(redis.current, (c) => c.pttl(rowKey))).toBe(-1);
  });

  it('a tombstone drops state and timers and expires after tombstoneTtlMs; an adopt makes it live again', async () => {
    const keyPrefix = freshPrefix();
    const store = await started({ keyPrefix, tombstoneTtlMs: 60_000 });
    const key = freshKey();
    await store.adopt([claim(key)]);
    await store.write([save(key, 1, 0, { timers: Uint8Array.of(9) })]);
    await store.write([save(key, 1, 1, { state: undefined, tombstone: true })]);
    const rowKey = stateRowKey(keyPrefix, key);
    const [fields, ttl] = await onServer(redis.current, (c) =>
      Promise.all([c.hkeys(rowKey), c.pttl(rowKey)]),
    );
    expect(fields).not.toContain('state');
    expect(fields).not.toContain('timers');
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await store.adopt([claim(key)]);
    expect(await onServer(redis.current, (c) => c.pttl(rowKey))).toBe(-1);
  });

  it.each<[string, (c: ReturnType<RedisServer['client']>, key: string) => Promise<unknown>, RegExp]>([
    ['a key that is no hash', (c, key) => c.set(key, 'x'), /holds a string, not a hash/],
    ['a hash without a type', (c, key) => c.hdel(key, 'type'), /type is missing/],
    ['an epoch of 0', (c, key) => c.hset(key, 'epoch', '0'), /epoch is 0/],
    ['a version past 15 digits', (c, key) => c.hset(key, 'version', '1234567890123456'), /version is not/],
  ])(
    '%s: adopt and write fail that row unreadable, naming store and key, and leave it as it is',
    async (_what, spoil, why) => {
      const keyPrefix = freshPrefix();
      const store = await started({ name: 'players', keyPrefix });
      const [bad, good] = [freshKey(), freshKey()];
      await store.adopt([claim(bad), claim(good)]);
      const rowKey = stateRowKey(keyPrefix, bad);
      await onServer(redis.current, (c) => spoil(c, rowKey));
      const before = await onServer(redis.current, (c) => c.dump(rowKey));
      const adopted = await store.adopt([claim(bad), claim(good)]);
      const written = await store.write([save(bad, 1, 0), save(good, 2, 0)]);
      for (const result of [adopted[0], written[0]]) {
        expect(result).toMatchObject({ ok: false, reason: 'unreadable', error: { code: 'ProtocolError' } });
        const message = (result as { error: Error }).error.message;
        expect(message).toContain(store.name);
        expect(message).toContain(rowKey);
        expect(message).toMatch(why);
      }
      expect([adopted[1]!.ok, written[1]]).toEqual([true, { ok: true, version: 1 }]);
      expect(await onServer(redis.current, (c) => c.dump(rowKey))).toEqual(before);
    },
  );
});

describe('RedisStateStore start()', () => {
  /** `start()`'s outcome, and that its message names the store. */
  async function startOf(store: RedisStateStore) {
    const result = await outcome(store.start());
    if (!result.ok) expect((result.error as Error).message).toContain(store.name);
    return result;
  }

  it('Redis down: Unavailable naming the store and ECONNREFUSED once startTimeoutMs has passed', async () => {
    const port = await freePort();
    const store = cleanup.add(
      new RedisStateStore({
        redis: `redis://:s3cret@127.0.0.1:${port}`,
        name: 'players',
        startTimeoutMs: 600,
      }),
    );
    const result = await startOf(store);
    expect(result).toMatchObject({ ok: false, code: 'Unavailable' });
    const error = (result as { error: Error }).error;
    expect(error.message).toContain(`State Store 'players' (Redis 127.0.0.1:${port} prefix zlink-state)`);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toContain('s3cret');
    // It kept asking until its bound, and no longer (generous: a loaded 2-core machine).
    expect(result.ms).toBeGreaterThanOrEqual(550);
    expect(result.ms).toBeLessThan(4000);
  });

  it('Redis stalled (SIGSTOP): Unavailable within startTimeoutMs; started once it answers again', async () => {
    const server = cleanup.add(await RedisServer.start());
    server.signal('SIGSTOP');
    const store = cleanup.add(new RedisStateStore({ redis: server.url, startTimeoutMs: 500 }));
    const result = await startOf(store);
    server.signal('SIGCONT');
    expect(result).toMatchObject({ ok: false, code: 'Unavailable' });
    expect(result.ms).toBeLessThan(4000);
    await store.start();
    expect((await store.adopt([claim(freshKey())]))[0]!.ok).toBe(true);
  });

  it('a Redis that may evict rows (maxmemory-policy allkeys-lru): Configuration at once', async () => {
    await onServer(redis.current, (c) => c.config('SET', 'maxmemory-policy', 'allkeys-lru'));
    try {
      const store = cleanup.add(new RedisStateStore({ redis: redis.current.url, startTimeoutMs: 5000 }));
      const result = await startOf(store);
      expect(result).toMatchObject({ ok: false, code: 'Configuration' });
      expect((result as { error: Error }).error.message).toMatch(/maxmemory-policy allkeys-lru/);
      expect(result.ms).toBeLessThan(2000);
    } finally {
      await onServer(redis.current, (c) => c.config('SET', 'maxmemory-policy', 'noeviction'));
    }
  });

  it('a user that may not run scripts, or a wrong password: Configuration at once, with what Redis said', async () => {
    await onServer(redis.current, (c) =>
      c.call('ACL', 'SETUSER', 'noscripts', 'on', '>pw', '~*', '+@all', '-@scripting'),
    );
    const url = (auth: string) => `redis://${auth}@127.0.0.1:${redis.current.port}`;
    for (const [auth, said] of [
      ['noscripts:pw', /NOPERM/],
      ['noscripts:wrong', /WRONGPASS/],
    ] as const) {
      const store = cleanup.add(new RedisStateStore({ redis: url(auth), startTimeoutMs: 5000 }));
      const result = await startOf(store);
      expect(result).toMatchObject({ ok: false, code: 'Configuration' });
      expect((result as { error: Error }).error.message).toMatch(said);
      expect(result.ms).toBeLessThan(2000);
    }
  });
});

describe('RedisStateStore across an outage', () => {
  it('Redis killed between two writes: the write rejects Unavailable, no row answered; back, it works again', async () => {
    const server = cleanup.add(await RedisServer.start());
    const store = cleanup.add(new RedisStateStore({ redis: server.url, name: 'players' }));
    await store.start();
    const key = freshKey();
    await store.adopt([claim(key)]);
    expect(await store.write([save(key, 1, 0)])).toEqual([{ ok: true, version: 1 }]);

    await server.stop();
    const lost = await outcome(store.write([save(key, 1, 1), save(freshKey(), 1, 0)]));
    expect(lost).toMatchObject({ ok: false, code: 'Unavailable' });
    expect((lost as { error: Error }).error.message).toContain(store.name);
    expect(((lost as { error: Error }).error.cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(lost.ms).toBeLessThan(4000);

    // Back without persistence, as the test's Redis is: the row is gone, and the key starts again.
    await server.restart();
    let adopted: Awaited<ReturnType<StateStore['adopt']>> | undefined;
    for (const deadline = Date.now() + 5000; !adopted && Date.now() < deadline;) {
      const r = await outcome(store.adopt([claim(key)]));
      if (r.ok) adopted = r.value;
      else await new Promise((done) => setTimeout(done, 50));
    }
    expect(adopted?.[0]).toMatchObject({ ok: true, saved: { epoch: 1, version: 0, state: undefined } });
    expect(await store.write([save(key, 1, 0)])).toEqual([{ ok: true, version: 1 }]);
  });
});

describe('RedisStateStore batches', () => {
  /** What Redis counted: script calls and the socket reads and writes it served (`INFO`). */
  async function counters() {
    const info = await onServer(redis.current, (c) => c.info('everything'));
    const n = (pattern: RegExp) => Number(pattern.exec(info)?.[1] ?? 0);
    return {
      evalsha: n(/^cmdstat_evalsha:calls=(\d+)/m),
      eval: n(/^cmdstat_eval:calls=(\d+)/m),
      reads: n(/^total_reads_processed:(\d+)/m),
      writes: n(/^total_writes_processed:(\d+)/m),
    };
  }

  it('a batch of batchLimit rows is one EVALSHA, read and answered in a few socket reads and writes', async () => {
    const store = await started();
    // The first call of each script on a connection sends the script itself (EVAL).
    await store.adopt([claim(freshKey())]);
    await store.write([save(freshKey(), 1, 0)]);
    const keys = Array.from({ length: store.batchLimit }, () => freshKey());
    const before = await counters();
    const adopted = await store.adopt(keys.map((key) => claim(key)));
    const written = await store.write(
      keys.map((key) => save(key, 1, 0, { state: new Uint8Array(64).fill(7) })),
    );
    const after = await counters();
    expect(adopted.every((r) => r.ok && r.saved.epoch === 1)).toBe(true);
    expect(written.every((r) => r.ok && r.version === 1)).toBe(true);
    // One call of the batch script per batch, every row a compare-and-set of its own inside it.
    expect([after.evalsha - before.evalsha, after.eval - before.eval]).toEqual([2, 0]);
    // One round trip each way per batch, give or take the socket buffer sizes (and the INFO read itself):
    // a row at a time would be 512 reads and 512 writes.
    expect(after.reads - before.reads).toBeLessThan(24);
    expect(after.writes - before.writes).toBeLessThan(24);
  });
});
