/**
 * What the Redis object stores leave in Redis (issue 15 item 1), read back with `SCAN` from a real
 * `redis-server`: every key under the store's prefix; the Authority Store's without a TTL (a record
 * is the object's existence), the Relocation Store's expiring a day after its last write (issue 51),
 * the Relocation Store's own prefix apart from the Location Store's, and a record someone else
 * wrote refused as unreadable rather than taken for absent.
 */
import { closeRedisClient } from '../../../lib/store/redis/client.js';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import {
  RELOCATION_RECORD_TTL_MS,
  RedisAuthorityStore,
  RedisRelocationStore,
} from '../../../lib/store/redis/redis-object-stores.js';
import { Cleanup, outcome } from '../../helpers/index.js';
import { serverDescriptor, useRedis } from './fixtures.js';
import { authority, freshKey, relocation } from './object-fixtures.js';

const redisServer = useRedis();

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

function raw(): Redis {
  const client = redisServer.current.client();
  cleanup.add({ close: () => closeRedisClient(client) });
  return client;
}

/** Every key in the server, by `SCAN` (never `KEYS`). */
async function scanAll(client: Redis): Promise<Set<string>> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'COUNT', 1000);
    for (const key of batch) keys.add(key);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** The keys a step added to the server. */
async function keysWritten(client: Redis, step: () => Promise<unknown>): Promise<string[]> {
  const before = await scanAll(client);
  await step();
  return [...(await scanAll(client))].filter((k) => !before.has(k)).sort();
}

describe('Redis object stores in Redis', () => {
  it("write only under their prefix, in the slot of their mesh; only the Relocation Store's keys have a TTL", async () => {
    const client = raw();
    const url = redisServer.current.url;
    const authorities = cleanup.add(new RedisAuthorityStore({ redis: url, keyPrefix: 'app' }));
    const relocations = cleanup.add(new RedisRelocationStore({ redis: url, keyPrefix: 'app-moves' }));
    const key = { mesh: 'g:{1}', kind: 'spot' as const, id: 'r:{2}' };
    const written = await keysWritten(client, async () => {
      await authorities.compareAndSet(
        key,
        'absent',
        authority({ owner: { rid: 'n:{3}', nodeGeneration: 'g' } }),
      );
      await relocations.compareAndSet(key, 'absent', relocation());
    });
    expect(written).toEqual([
      'app-moves:{relocation:g%3A%7B1%7D}:r:spot:r%3A%7B2%7D',
      'app-moves:{relocation:g%3A%7B1%7D}:v',
      'app-moves:{relocation:g%3A%7B1%7D}:x:node-a',
      'app-moves:{relocation:g%3A%7B1%7D}:x:node-b',
      'app:{mesh-node:g%3A%7B1%7D}:authority:r:spot:r%3A%7B2%7D',
      'app:{mesh-node:g%3A%7B1%7D}:authority:v',
      'app:{mesh-node:g%3A%7B1%7D}:authority:x:n%3A%7B3%7D',
    ]);
    for (const k of written) {
      const ttl = await client.pttl(k);
      if (k.startsWith('app-moves:')) expect(ttl).toBeGreaterThan(RELOCATION_RECORD_TTL_MS - 60000);
      else expect({ k, ttl }).toEqual({ k, ttl: -1 });
      expect(ttl).toBeLessThanOrEqual(RELOCATION_RECORD_TTL_MS);
    }
  });

  it('a record outlives the handle that wrote it (closing a store removes nothing)', async () => {
    const url = redisServer.current.url;
    const key = freshKey();
    const writer = new RedisAuthorityStore({ redis: url, keyPrefix: 'lasting' });
    const written = await writer.compareAndSet(key, 'absent', authority());
    await writer.close();
    const reader = cleanup.add(new RedisAuthorityStore({ redis: url, keyPrefix: 'lasting' }));
    expect(await reader.get(key)).toMatchObject({
      record: authority(),
      version: written.ok && written.version,
    });
  });

  it('the Relocation Store keeps its own prefix: its keys never meet the Location Store or the Authority Store', async () => {
    const client = raw();
    const url = redisServer.current.url;
    // Defaults first: the Location and Authority Stores share `zlink`, the Relocation Store has its own.
    const location = cleanup.add(new RedisLocationStore({ redis: url }));
    const authorities = cleanup.add(new RedisAuthorityStore({ redis: url }));
    const relocations = cleanup.add(new RedisRelocationStore({ redis: url }));
    const key = freshKey({ mesh: 'billing' });
    const locationKeys = await keysWritten(client, () => location.put(serverDescriptor(), 10000));
    const authorityKeys = await keysWritten(client, () =>
      authorities.compareAndSet(key, 'absent', authority()),
    );
    const relocationKeys = await keysWritten(client, () =>
      relocations.compareAndSet(key, 'absent', relocation()),
    );
    expect(locationKeys.every((k) => k.startsWith('zlink:{server:billing}'))).toBe(true);
    expect(authorityKeys.every((k) => k.startsWith('zlink:{mesh-node:billing}:authority:'))).toBe(true);
    expect(relocationKeys.every((k) => k.startsWith('zlink-relocation:{relocation:billing}'))).toBe(true);
    expect(relocationKeys.some((k) => k.startsWith('zlink:'))).toBe(false);
    for (const keys of [locationKeys, authorityKeys, relocationKeys]) expect(keys.length).toBeGreaterThan(0);

    // Even configured with the Location Store's own prefix, its slots are its own.
    const samePrefix = cleanup.add(new RedisRelocationStore({ redis: url, keyPrefix: 'zlink' }));
    const sameKeys = await keysWritten(client, () =>
      samePrefix.compareAndSet(freshKey({ mesh: 'billing' }), 'absent', relocation()),
    );
    expect(sameKeys.every((k) => k.startsWith('zlink:{relocation:billing}'))).toBe(true);
    expect(await location.list('server', 'billing')).toEqual([serverDescriptor()]);
    expect((await relocations.get(key))?.record).toEqual(relocation());
    expect((await authorities.get(key))?.record).toEqual(authority());
  });

  it('a record someone else wrote is refused as unreadable (never taken for absent), skipped in lists, and can be replaced by its version', async () => {
    const client = raw();
    const store = cleanup.add(new RedisAuthorityStore({ redis: redisServer.current.url, keyPrefix: 'odd' }));
    const key = freshKey();
    const slot = 'odd:{mesh-node:game}:authority';
    await client.hset(
      `${slot}:r:spot:${key.id}`,
      'version',
      '77',
      'body',
      '{"type":"room"}',
      'writtenAt',
      '1',
    );
    await client.sadd(`${slot}:x:node-a`, `spot:${key.id}`);
    const read = await outcome(store.get(key));
    expect(read).toMatchObject({ ok: false, code: 'ProtocolError' });
    expect(read.ok || (read.error as { details: unknown }).details).toEqual({ key, version: 77 });
    expect(await outcome(store.compareAndSet(key, 'absent', authority()))).toMatchObject({
      ok: false,
      code: 'ProtocolError',
    });
    expect(await store.listByOwner('game', 'node-a')).toEqual([]);
    const repaired = await store.compareAndSet(key, 77, authority());
    expect(repaired.ok && repaired.version).toBeGreaterThan(0);
    expect((await store.listByOwner('game', 'node-a')).map((v) => v.key)).toEqual([key]);
  });
});
