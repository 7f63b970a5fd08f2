import { describe, expect, it } from '@jest/globals';
import type { AuthorityRecord, AuthorityStore, ObjectKey } from '../../../../lib/core/index.js';
import { AuthorityResolver, CachedResolver, RouteCache } from '../../../../lib/spot/resolve/index.js';
import { MemoryAuthorityStore } from '../../../../lib/store/index.js';
import { FakeClock, FakeLeases, MESH, RUN_A, authority } from '../fixtures.js';

/**
 * Direct resolution (docs/protocol.md#resolving-a-global-id): a hit reads no store; a miss reads it once and caches
 * a Ready result; concurrent misses of one object share one read; Missing, Unavailable and
 * StoreFailure are read again on every call (docs/protocol.md#the-route-cache). Reads are counted here by wrapping the memory
 * store; the Redis integration test counts them in Redis itself.
 */

function setup(maxAgeMs = 15000) {
  const memory = new MemoryAuthorityStore();
  const reads: string[] = [];
  let failing: Error | undefined;
  const store = {
    get: (key: ObjectKey) => {
      reads.push(key.id);
      return failing ? Promise.reject(failing) : memory.get(key);
    },
  } as unknown as AuthorityStore;
  const clock = new FakeClock();
  const leases = new FakeLeases();
  leases.set(RUN_A, Number.MAX_SAFE_INTEGER);
  const cache = new RouteCache({ maxAgeMs, clock, leases });
  const resolver = new CachedResolver(new AuthorityResolver({ mesh: MESH, store, leases, clock }), cache);
  const write = async (id: string, record: AuthorityRecord = authority()) => {
    const key = { mesh: MESH, kind: 'spot', id } as const;
    const current = await memory.get(key);
    return memory.compareAndSet(key, current?.version ?? 'absent', record);
  };
  const fail = (error: Error | undefined) => (failing = error);
  return { reads, cache, resolver, write, fail };
}

describe('CachedResolver', () => {
  it('N resolves of one Ready object read the store once', async () => {
    const { reads, resolver, write } = setup();
    await write('room-1');
    const first = await resolver.resolve('spot', 'room-1');
    expect(first.tag).toBe('ReadyRoute');
    for (let i = 0; i < 100; i++) expect(await resolver.resolve('spot', 'room-1')).toBe(first);
    expect(reads).toEqual(['room-1']);
  });

  it('concurrent misses of one object share one read', async () => {
    const { reads, resolver, write } = setup();
    await write('room-1');
    const results = await Promise.all(Array.from({ length: 20 }, () => resolver.resolve('spot', 'room-1')));
    expect(new Set(results).size).toBe(1);
    expect(reads).toEqual(['room-1']);
  });

  it('Missing, Creating, Unavailable and StoreFailure are read again on every call', async () => {
    const { reads, resolver, write, fail } = setup();
    expect((await resolver.resolve('spot', 'gone')).tag).toBe('Missing');
    expect((await resolver.resolve('spot', 'gone')).tag).toBe('Missing');
    await write('making', authority({}, 'creating'));
    expect(await resolver.resolve('spot', 'making')).toMatchObject({ reason: 'creating' });
    expect(await resolver.resolve('spot', 'making')).toMatchObject({ reason: 'creating' });
    await write('lost', authority({ owner: { rid: 'dead', nodeGeneration: 'g' } }));
    expect(await resolver.resolve('spot', 'lost')).toMatchObject({ reason: 'ownerLeaseGone' });
    expect(await resolver.resolve('spot', 'lost')).toMatchObject({ reason: 'ownerLeaseGone' });
    fail(new Error('down'));
    expect((await resolver.resolve('spot', 'flaky')).tag).toBe('StoreFailure');
    fail(undefined);
    await write('flaky');
    // A failure alone never ends the next call (docs/protocol.md#the-route-cache): it reads again and finds the object.
    expect((await resolver.resolve('spot', 'flaky')).tag).toBe('ReadyRoute');
    expect(reads).toEqual(['gone', 'gone', 'making', 'making', 'lost', 'lost', 'flaky', 'flaky']);
  });

  it('after an invalidation the next call reads the current authority', async () => {
    const { reads, resolver, write, cache } = setup();
    await write('room-1');
    const old = await resolver.resolve('spot', 'room-1');
    if (old.tag !== 'ReadyRoute') throw new Error(`expected a ReadyRoute, got ${old.tag}`);
    await write('room-1', authority({ authorityOwnerGeneration: 2 }));
    expect(cache.invalidateStale('spot', 'room-1', old)).toBe(true);
    expect(await resolver.resolve('spot', 'room-1')).toMatchObject({ authorityOwnerGeneration: 2 });
    expect(reads).toHaveLength(2);
  });

  it('a call after an invalidation does not join a read started before it, and that read is not cached', async () => {
    const { reads, resolver, write, cache } = setup();
    await write('room-1');
    const before = resolver.resolve('spot', 'room-1');
    cache.storeRecovered();
    const after = resolver.resolve('spot', 'room-1');
    expect(after).not.toBe(before);
    await Promise.all([before, after]);
    expect(reads).toHaveLength(2);
    await resolver.resolve('spot', 'room-1');
    expect(reads).toHaveLength(2);
  });

  it('with max age 0 every call reads the store', async () => {
    const { reads, resolver, write } = setup(0);
    await write('room-1');
    for (let i = 0; i < 3; i++) expect((await resolver.resolve('spot', 'room-1')).tag).toBe('ReadyRoute');
    expect(reads).toHaveLength(3);
  });

  it('a bad kind rejects InvalidArgument, as the resolver does', async () => {
    const { resolver } = setup();
    await expect(resolver.resolve('room' as 'spot', 'x')).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(resolver.resolve('spot', '')).rejects.toMatchObject({ code: 'InvalidArgument' });
  });
});
