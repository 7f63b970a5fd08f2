/**
 * The Location Store contract (issue 5 items 1–2), once per implementation: the Redis store against a
 * private `redis-server`, and the memory store. Descriptors round-trip, a stale revision never
 * overwrites a newer one, generations of one RID live side by side, leases expire unless refreshed,
 * removal and change hints, and key prefixes keep stores apart.
 */
import { closeRedisClient } from '../../../lib/store/redis/client.js';
import { afterEach, describe, expect, it } from '@jest/globals';
import type {
  LocationDescriptor,
  LocationStore,
  MeshNodeDescriptor,
  PublisherDescriptor,
  ServerDescriptor,
} from '../../../lib/core/index.js';
import { MemoryLocationStore } from '../../../lib/store/index.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { serverDescriptor, useRedis } from './fixtures.js';

const server = serverDescriptor;
const node: MeshNodeDescriptor = {
  kind: 'mesh-node',
  mesh: 'game',
  rid: 'play-a',
  generation: 'g1',
  endpoint: 'tcp://10.0.0.2:7300',
  objectRole: 'none',
  memberships: [{ channel: 'match', weight: 100, draining: false }],
  revision: 1,
};
const publisher: PublisherDescriptor = {
  kind: 'publisher',
  channel: 'news',
  rid: 'pub-a',
  generation: 'g1',
  endpoint: 'tcp://10.0.0.3:7400',
  revision: 1,
};

const redisServer = useRedis();

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const implementations: [string, () => LocationStore][] = [
  [
    'RedisLocationStore',
    () =>
      cleanup.add(new RedisLocationStore({ redis: redisServer.current.url, keyPrefix: `t${Math.random()}` })),
  ],
  ['MemoryLocationStore', () => cleanup.add(new MemoryLocationStore())],
];

describe.each(implementations)('%s', (_name, make) => {
  it('descriptors of every kind round-trip, listed by kind and scope', async () => {
    const store = make();
    for (const d of [server(), node, publisher] as LocationDescriptor[]) {
      expect(await store.put(d, 10000)).toBe('written');
    }
    expect(await store.list('server', 'billing')).toEqual([server()]);
    expect(await store.list('mesh-node', 'game')).toEqual([node]);
    expect(await store.list('publisher', 'news')).toEqual([publisher]);
    expect(await store.list('server', 'game')).toEqual([]);
  });

  it('a stale revision never overwrites a newer one; a larger one does', async () => {
    const store = make();
    expect(await store.put(server({ revision: 3, weight: 0 }), 10000)).toBe('written');
    expect(await store.put(server({ revision: 2, weight: 50 }), 10000)).toBe('stale');
    expect(await store.put(server({ revision: 3, weight: 70 }), 10000)).toBe('stale');
    expect((await store.list('server', 'billing')).map((d) => (d as ServerDescriptor).weight)).toEqual([0]);
    expect(await store.put(server({ revision: 4, draining: true }), 10000)).toBe('written');
    expect(await store.list('server', 'billing')).toEqual([server({ revision: 4, draining: true })]);
  });

  it('two generations of one RID are two descriptors (a restart does not overwrite the old one)', async () => {
    const store = make();
    await store.put(server({ generation: 'g1', revision: 9 }), 10000);
    await store.put(server({ generation: 'g2', revision: 1 }), 10000);
    const generations = (await store.list('server', 'billing')).map((d) => d.generation).sort();
    expect(generations).toEqual(['g1', 'g2']);
  });

  it('a lease ends unless refreshed; refresh says when a descriptor is gone; remove takes it at once', async () => {
    const store = make();
    const kept = server({ rid: 'kept' });
    const lapsed = server({ rid: 'lapsed' });
    await store.put(kept, 300);
    await store.put(lapsed, 300);
    const refresher = setInterval(() => void store.refresh([kept], 300), 100);
    try {
      // Bounded: the lease is 300 ms; a noisy machine gets ten times that.
      const deadline = Date.now() + 3000;
      while ((await store.list('server', 'billing')).length !== 1 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      clearInterval(refresher);
    }
    expect((await store.list('server', 'billing')).map((d) => d.rid)).toEqual(['kept']);
    expect(await store.refresh([kept, lapsed], 300)).toBe(false);
    expect(await store.refresh([kept], 300)).toBe(true);
    await store.remove(kept);
    expect(await store.list('server', 'billing')).toEqual([]);
  });

  it('watchers of a scope hear of puts and removes there, not elsewhere; unsubscribing stops it', async () => {
    const store = make();
    let billing = 0;
    let other = 0;
    const stop = await store.watch('server', 'billing', () => billing++);
    await store.watch('server', 'other', () => other++);
    await store.put(server(), 10000);
    await waitFor(() => billing === 1, 3000, 'a change hint');
    await store.remove(server());
    await waitFor(() => billing === 2, 3000, 'a second hint');
    await stop();
    await store.put(server({ revision: 2 }), 10000);
    await new Promise((r) => setTimeout(r, 100));
    expect([billing, other]).toEqual([2, 0]);
  });
});

describe('RedisLocationStore on a shared Redis', () => {
  it('two key prefixes are two stores; malformed bodies are skipped, not returned', async () => {
    const a = cleanup.add(new RedisLocationStore({ redis: redisServer.current.url, keyPrefix: 'app-a' }));
    const b = cleanup.add(new RedisLocationStore({ redis: redisServer.current.url, keyPrefix: 'app-b' }));
    await a.put(server(), 10000);
    expect(await b.list('server', 'billing')).toEqual([]);
    // Someone else's (or another version's) writing in our keys.
    const raw = redisServer.current.client();
    try {
      const slot = 'app-a:{server:billing}';
      await raw.hset(`${slot}:d:x:1`, 'revision', '1', 'body', '{"kind":"server","rid":5}');
      await raw.zadd(`${slot}:i`, Date.now() + 60000, 'x:1');
      await raw.hset(`${slot}:d:y:1`, 'revision', '1', 'body', 'not json');
      await raw.zadd(`${slot}:i`, Date.now() + 60000, 'y:1');
    } finally {
      await closeRedisClient(raw);
    }
    expect(await a.list('server', 'billing')).toEqual([server()]);
  });

  it('a ChannelName with braces and colons keeps its own slot and round-trips', async () => {
    const store = cleanup.add(new RedisLocationStore({ redis: redisServer.current.url, keyPrefix: 'odd' }));
    const odd = server({ channel: 'a:{b}:c' });
    await store.put(odd, 10000);
    expect(await store.list('server', 'a:{b}:c')).toEqual([odd]);
    expect(await store.list('server', 'a')).toEqual([]);
  });

  it('an index lives as long as its longest lease: a writer killed before it removed itself leaves no key for ever', async () => {
    const store = cleanup.add(new RedisLocationStore({ redis: redisServer.current.url, keyPrefix: 'ttl' }));
    const raw = redisServer.current.client();
    try {
      const index = 'ttl:{server:billing}:i';
      await store.put(server({ rid: 'long' }), 60000);
      await store.put(server({ rid: 'short' }), 2000);
      // The shorter lease never shortens it; a refresh of the longer one keeps it that long.
      expect(await raw.pttl(index)).toBeGreaterThan(50000);
      await store.refresh([server({ rid: 'long' })], 60000);
      expect(await raw.pttl(index)).toBeGreaterThan(50000);
      expect(await raw.pttl(index)).toBeLessThanOrEqual(60000);
      // Never removed (as after SIGKILL): both the descriptor and its index entry go with the lease.
      await store.put(server({ channel: 'alone', rid: 'killed' }), 1000);
      const ttl = await raw.pttl('ttl:{server:alone}:i');
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(1000);
    } finally {
      await closeRedisClient(raw);
    }
  });
});
