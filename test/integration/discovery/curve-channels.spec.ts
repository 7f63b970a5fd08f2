/**
 * CURVE on discovered ClientServer servers and fanout publishers over a real redis-server (issue 18):
 * each Server and publisher descriptor carries its public key, so a client or subscriber that lists no
 * endpoint connects to each one's key only; and a server that restarts with a new key pair on the same
 * endpoint (a key rotation) is reached under its new key while calls go on, with no failed request
 * (the drain's own refusals, which never ran, are retried as a caller does).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { PublisherDescriptor, ServerDescriptor } from '../../../lib/core/index.js';
import { type ZLinkRuntime, zlinkKeyPair } from '../../../lib/index.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { Cleanup, freePort, underLoad, waitFor } from '../../helpers/index.js';
import { useRedis } from '../store/fixtures.js';
import { startRuntime, waitForCandidates } from '../client-server/harness.js';
import { startPublisher, startSubscriber, subscribed } from '../fanout/harness.js';
import { freshPrefix } from './harness.js';

const redis = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const clientKeys = zlinkKeyPair();
type Keys = { publicKey: string; secretKey: string };
type Store = { redis: string; keyPrefix: string };

/** A server of 'match' that answers with its RID; it admits the client's key (clients publish none). */
function server(store: Store, rid: string, keys: Keys, port = 0) {
  return startRuntime(
    cleanup,
    {
      locationStore: store,
      clientServer: { match: { server: { rid, listen: { bindHost: '127.0.0.1', port } } } },
      security: { curve: { ...keys, allow: [clientKeys.publicKey] } },
    },
    [['request', 'who', () => rid]],
  );
}

function tally(values: unknown[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[String(v)] = (out[String(v)] ?? 0) + 1;
  return out;
}

describe('CURVE with discovered servers and publishers', () => {
  it('a client that lists no endpoint reaches each server under the key its descriptor carries; a server rotating its key loses no request', async () => {
    const store = { redis: redis.current.url, keyPrefix: freshPrefix() };
    const port = await freePort();
    const s1Keys = zlinkKeyPair();
    await server(store, 's1', s1Keys);
    const s2 = await server(store, 's2', zlinkKeyPair(), port);
    const client = await startRuntime(cleanup, {
      locationStore: store,
      clientServer: { match: { client: { discovery: 'auto' } } },
      security: { curve: clientKeys },
    });
    await waitForCandidates(client, 'match', 2, 10000);
    const ask = (c: ZLinkRuntime) =>
      c.routeClient.requestToChannel('match', 'who', {}).async({ timeoutMs: 10000 });
    const first: unknown[] = [];
    for (let i = 0; i < 20; i++) first.push(await ask(client));
    expect(tally(first)).toEqual({ s1: 10, s2: 10 });
    const reader = cleanup.add(new RedisLocationStore({ redis: store.redis, keyPrefix: store.keyPrefix }));
    const listed = (await reader.list('server', 'match')) as ServerDescriptor[];
    expect(listed.find((d) => d.rid === 's1')?.publicKey).toBe(s1Keys.publicKey);

    // Calls keep coming while s2 restarts under a new key pair on the same endpoint.
    const load = underLoad(() => ask(client));
    const { results } = load;
    await new Promise((r) => setTimeout(r, 200));
    await s2.drain();
    await s2.close();
    const s2b = await server(store, 's2', zlinkKeyPair(), port);
    const rotated = (c: { ready: boolean; serverRid?: string; generation?: string }) =>
      c.ready && c.serverRid === 's2' && c.generation === s2b.generation;
    await waitFor(
      () => client.snapshot().channels[0]?.client?.connections.some(rotated) ?? false,
      15000,
      's2 ready again under its new key',
    );
    const before = results.length;
    await new Promise((r) => setTimeout(r, 300));
    const refusedByDrain = await load.stop();
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(refusedByDrain).toBeLessThan(5);
    expect(results.slice(before).some((r) => r.ok && r.value === 's2')).toBe(true);
  });

  it('a subscriber that lists no endpoint receives from a publisher under the key its descriptor carries', async () => {
    const store = { redis: redis.current.url, keyPrefix: freshPrefix() };
    const pubKeys = zlinkKeyPair();
    const pub = await startPublisher(
      cleanup,
      'news',
      { rid: 'news-1' },
      { locationStore: store, security: { curve: { ...pubKeys, allow: [clientKeys.publicKey] } } },
    );
    const received: unknown[] = [];
    const sub = await startSubscriber(
      cleanup,
      'news',
      { discovery: 'auto' },
      { notice: (e: unknown) => void received.push(e) },
      { locationStore: store, security: { curve: clientKeys } },
    );
    await subscribed(sub, 'news');
    const deadline = Date.now() + 10000;
    while (received.length === 0 && Date.now() < deadline) {
      await pub.fanoutClient.publish('news', 'notice', { n: 1 }).async();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(received[0]).toEqual({ n: 1 });
    const reader = cleanup.add(new RedisLocationStore({ redis: store.redis, keyPrefix: store.keyPrefix }));
    const listed = (await reader.list('publisher', 'news')) as PublisherDescriptor[];
    expect(listed[0]?.publicKey).toBe(pubKeys.publicKey);
  });
});
