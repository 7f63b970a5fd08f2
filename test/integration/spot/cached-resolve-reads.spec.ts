/**
 * The positive route cache against a real Authority Store on a private `redis-server` (issue 16
 * item 4; docs/protocol.md#the-route-cache: a cache hit reads no store): N cached resolves
 * of one object cost exactly one store read, and a Missing object is read on every call (never
 * negative-cached). Reads are counted by Redis itself (`INFO commandstats`: the authority store's
 * reads are Lua scripts, EVALSHA — or EVAL when the script was not loaded yet), not by a spy.
 */
import { closeRedisClient } from '../../../lib/store/redis/client.js';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { NodeRun } from '../../../lib/core/index.js';
import { AuthorityResolver, CachedResolver, RouteCache } from '../../../lib/spot/resolve/index.js';
import { type OwnerLeaseView, SYSTEM_CLOCK } from '../../../lib/spot/index.js';
import { createRedisAuthorityStore } from '../../../lib/store/index.js';
import { Cleanup } from '../../helpers/index.js';
import { useRedis } from '../store/fixtures.js';

const redisServer = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const MESH = 'objects';
const OWNER: NodeRun = { rid: 'node-a', nodeGeneration: 'ga1' };

/** The owner holds a lease for the whole test: the runtime's real view reads descriptors later. */
const leases: OwnerLeaseView = {
  admissionDeadline: (run) =>
    run.rid === OWNER.rid && run.nodeGeneration === OWNER.nodeGeneration ? Date.now() + 60000 : undefined,
};

/** Runs `use` on a plain client of the test's redis-server (its commands are counted under their own names). */
async function withRedis<T>(
  use: (redis: ReturnType<typeof redisServer.current.client>) => Promise<T>,
): Promise<T> {
  const redis = redisServer.current.client();
  try {
    return await use(redis);
  } finally {
    await closeRedisClient(redis);
  }
}

/** Redis's own count of the script calls (EVALSHA and EVAL) and GETs since the last `CONFIG RESETSTAT`. */
async function storeReads(): Promise<number> {
  const info = await withRedis((redis) => redis.info('commandstats'));
  let calls = 0;
  for (const name of ['evalsha', 'eval', 'get']) {
    const match = new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(info);
    calls += match ? Number(match[1]) : 0;
  }
  return calls;
}

const resetStats = () => withRedis((redis) => redis.config('RESETSTAT'));

async function setup() {
  const store = cleanup.add(
    await createRedisAuthorityStore({ redis: redisServer.current.url, keyPrefix: `t${Math.random()}` }),
  );
  const cache = new RouteCache({ maxAgeMs: 15000, clock: SYSTEM_CLOCK, leases });
  const resolver = new CachedResolver(
    new AuthorityResolver({ mesh: MESH, store, leases, clock: SYSTEM_CLOCK }),
    cache,
  );
  const created = await store.compareAndSet({ mesh: MESH, kind: 'spot', id: 'room-1' }, 'absent', {
    type: 'room',
    state: 'ready',
    owner: OWNER,
    objectGeneration: 1,
    authorityOwnerGeneration: 1,
    ownerLeaseGeneration: 1,
  });
  expect(created.ok).toBe(true);
  // Loads the read script, so the counted reads below are one command each (no NOSCRIPT retry).
  expect((await store.get({ mesh: MESH, kind: 'spot', id: 'warm-up' })) ?? 'none').toBe('none');
  return { resolver, cache };
}

describe('cached resolve on a Redis Authority Store', () => {
  it('N cached resolves of one Ready object cost exactly one store read, counted by Redis', async () => {
    const { resolver } = await setup();
    await resetStats();
    const before = await storeReads();
    expect(before).toBe(0);
    const N = 1000;
    const first = await resolver.resolve('spot', 'room-1');
    expect(first).toMatchObject({ tag: 'ReadyRoute', owner: OWNER, storeVersion: expect.any(Number) });
    for (let i = 1; i < N; i++) expect(await resolver.resolve('spot', 'room-1')).toBe(first);
    expect(await storeReads()).toBe(1);
  });

  it('a Missing object is read from the store on every call', async () => {
    const { resolver, cache } = await setup();
    await resetStats();
    for (let i = 0; i < 5; i++) expect((await resolver.resolve('spot', 'nobody')).tag).toBe('Missing');
    expect(await storeReads()).toBe(5);
    expect(cache.size).toBe(0);
  });
});
