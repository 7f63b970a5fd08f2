/**
 * A takeover of an authority record is decided by the store, atomically with the write (issue 16:
 * exactly one live owner): it is refused while the previous owner's MeshNode descriptor holds a live
 * lease in the Location Store beside it, and allowed once that descriptor is removed or lapsed —
 * whatever the taking node's own view of leases says. On a private `redis-server` (the record and the
 * descriptor index share one hash slot) and in memory (`MemoryLocationStore.authorityStore()`).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { AuthorityStore, LocationStore, MeshNodeDescriptor } from '../../../lib/core/index.js';
import { MemoryLocationStore } from '../../../lib/store/index.js';
import { RedisAuthorityStore } from '../../../lib/store/redis/redis-object-stores.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { Cleanup } from '../../helpers/index.js';
import { useRedis } from './fixtures.js';
import { authority, freshKey } from './object-fixtures.js';

const redisServer = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const OLD = { rid: 'node-a', nodeGeneration: 'g1' };
const NEW = { rid: 'node-b', nodeGeneration: 'g9' };

function descriptor(mesh: string): MeshNodeDescriptor {
  return {
    kind: 'mesh-node',
    mesh,
    rid: OLD.rid,
    generation: OLD.nodeGeneration,
    endpoint: 'tcp://127.0.0.1:1',
    objectRole: 'server',
    memberships: [],
    revision: 1,
  };
}

const backends: [string, () => { location: LocationStore; authorities: AuthorityStore }][] = [
  [
    'Redis',
    () => {
      const keyPrefix = `t${Math.random()}`;
      const location = cleanup.add(new RedisLocationStore({ redis: redisServer.current.url, keyPrefix }));
      const authorities = cleanup.add(new RedisAuthorityStore({ redis: redisServer.current.url, keyPrefix }));
      return { location, authorities };
    },
  ],
  [
    'memory',
    () => {
      const location = new MemoryLocationStore();
      return { location, authorities: location.authorityStore() };
    },
  ],
];

describe.each(backends)('authority takeover (%s)', (_name, make) => {
  it('is refused while the previous owner holds a live lease, and allowed once it is gone', async () => {
    const { location, authorities } = make();
    const key = freshKey();
    const d = descriptor(key.mesh);
    await location.put(d, 10000);
    const created = await authorities.compareAndSet(key, 'absent', authority({ owner: OLD }));
    if (!created.ok) throw new Error('setup');
    const next = authority({ owner: NEW, state: 'creating', objectGeneration: 0 });
    expect(await authorities.takeOver(key, created.version, next, OLD)).toEqual({
      ok: false,
      ownerAlive: true,
    });
    expect((await authorities.get(key))?.record.owner).toEqual(OLD);
    // A version mismatch is reported as compareAndSet reports it, the owner's liveness aside.
    expect(await authorities.takeOver(key, created.version + 100, next, OLD)).toMatchObject({
      ok: false,
      current: { version: created.version },
    });
    await location.remove(d);
    const taken = await authorities.takeOver(key, created.version, next, OLD);
    expect(taken).toMatchObject({ ok: true });
    expect((await authorities.get(key))?.record.owner).toEqual(NEW);
  });

  it('a lapsed lease counts as gone, and a takeover may delete the record', async () => {
    const { location, authorities } = make();
    const key = freshKey();
    await location.put(descriptor(key.mesh), 150);
    const created = await authorities.compareAndSet(key, 'absent', authority({ owner: OLD }));
    if (!created.ok) throw new Error('setup');
    expect(await authorities.takeOver(key, created.version, undefined, OLD)).toEqual({
      ok: false,
      ownerAlive: true,
    });
    await new Promise((r) => setTimeout(r, 250));
    expect(await authorities.takeOver(key, created.version, undefined, OLD)).toMatchObject({ ok: true });
    expect(await authorities.get(key)).toBeUndefined();
  });
});
