/**
 * CURVE with automatic discovery over a real redis-server (issue 18): each MeshNode's descriptor carries
 * its public key, so nodes that list no peer still connect to each other's keys only; and a node that
 * restarts with a new key pair (a key rotation) is reached under its new key while calls go on, with
 * no failed request (the drain's own refusals, which never ran, are retried as a caller does).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { MeshNodeDescriptor } from '../../../lib/core/index.js';
import { type ZLinkRuntime, zlinkKeyPair } from '../../../lib/index.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { Cleanup, freePort, underLoad } from '../../helpers/index.js';
import { useRedis } from '../store/fixtures.js';
import { type MeshNodeSpec, startNode, tally, who } from '../route-mesh/harness.js';
import { freshPrefix } from './harness.js';

const redis = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

type StoreOptions = NonNullable<NonNullable<MeshNodeSpec['extra']>['locationStore']>;

function secureNode(store: StoreOptions, rid: string, keys = zlinkKeyPair(), port?: number) {
  return startNode(cleanup, {
    rid,
    port,
    discovery: 'auto',
    channels: { match: { role: rid === 'node-a' ? 'client' : 'server' } },
    handlers: rid === 'node-a' ? [] : [['match', 'request', 'who', who(rid)]],
    extra: { locationStore: store, security: { curve: keys } },
  });
}

describe('CURVE with automatic discovery', () => {
  it('nodes that list no peer connect through the keys their descriptors carry', async () => {
    const store = { redis: redis.current.url, keyPrefix: freshPrefix() };
    const keys = zlinkKeyPair();
    const nodes: ZLinkRuntime[] = [
      await secureNode(store, 'node-a'),
      await secureNode(store, 'node-b', keys),
      await secureNode(store, 'node-c'),
    ];
    for (const node of nodes) await node.waitForPeers('game', 2, 10000);
    await nodes[0]!.waitForCandidates('match', 2, 10000);
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => nodes[0]!.routeClient.requestToChannel('match', 'who', {}).async()),
    );
    expect(tally(answers)).toEqual({ 'node-b': 50, 'node-c': 50 });
    const reader = cleanup.add(
      new RedisLocationStore({ redis: redis.current.url, keyPrefix: store.keyPrefix }),
    );
    const listed = (await reader.list('mesh-node', 'game')) as MeshNodeDescriptor[];
    expect(listed.find((d) => d.rid === 'node-b')?.publicKey).toBe(keys.publicKey);
  });

  it('a node restarted with a new key pair on the same endpoint is reached under its new key; no request fails', async () => {
    const store = { redis: redis.current.url, keyPrefix: freshPrefix() };
    const port = await freePort();
    const a = await secureNode(store, 'node-a');
    const b1 = await secureNode(store, 'node-b', zlinkKeyPair(), port);
    await secureNode(store, 'node-c');
    await a.waitForCandidates('match', 2, 10000);
    // Calls keep coming, one at a time, while node-b restarts under a new key. A call node-b refuses
    // while it drains (`Rejected`: it never ran) is retried, as a caller of a draining server does.
    const load = underLoad(() =>
      a.routeClient.requestToChannel('match', 'who', {}).async({ timeoutMs: 10000 }),
    );
    const { results } = load;
    await new Promise((r) => setTimeout(r, 200));
    // A graceful stop: peers stop choosing node-b, what it accepted finishes, then it closes.
    await b1.drain();
    await b1.close();
    const rotated = zlinkKeyPair();
    const b2 = await secureNode(store, 'node-b', rotated, port);
    await a.waitForCandidates('match', 2, 15000);
    const before = results.length;
    await new Promise((r) => setTimeout(r, 300));
    const refusedByDrain = await load.stop();
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(refusedByDrain).toBeLessThan(5);
    // node-b answers again, now under its new key.
    expect(results.slice(before).some((r) => r.ok && r.value === 'node-b')).toBe(true);
    expect(
      b2
        .snapshot()
        .meshes[0]?.peers.map((p) => p.rid)
        .sort(),
    ).toEqual(['node-a', 'node-c']);
  });
});
