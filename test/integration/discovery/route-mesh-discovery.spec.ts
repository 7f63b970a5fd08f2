/**
 * RouteMesh automatic discovery over a real redis-server (docs/protocol.md#location-store, docs/protocol.md#discovery, docs/protocol.md#mesh-join): MeshNodes that
 * list no peer find each other through their MeshNode descriptors, one link per pair; a restarted
 * node is reached at its new endpoint and generation; memberships reach the store by revision; a
 * fenced node refuses new business messages.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { MeshNodeDescriptor } from '../../../lib/core/index.js';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { Cleanup, EventCollector, outcome, waitFor } from '../../helpers/index.js';
import { useRedis } from '../store/fixtures.js';
import { type MeshNodeSpec, startNode, tally, who } from '../route-mesh/harness.js';
import { freshPrefix } from './harness.js';

const redis = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

type StoreOptions = NonNullable<NonNullable<MeshNodeSpec['extra']>['locationStore']>;

function autoNode(store: StoreOptions, rid: string, spec: Partial<MeshNodeSpec> = {}) {
  return startNode(cleanup, {
    rid,
    discovery: 'auto',
    channels: { match: { role: 'server' } },
    handlers: [['match', 'request', 'who', who(rid)]],
    nodeHandlers: [['request', 'ping', () => rid]],
    ...spec,
    extra: { locationStore: store, ...spec.extra },
  });
}

describe("MeshNodes with discovery: 'auto' find each other through the store", () => {
  it('three nodes with no peers listed connect once per pair and serve select-one and Node direct', async () => {
    const store = { redis: redis.current.url, keyPrefix: freshPrefix() };
    const nodes: ZLinkRuntime[] = [];
    for (const rid of ['node-a', 'node-b', 'node-c']) nodes.push(await autoNode(store, rid));
    for (const node of nodes) await node.waitForPeers('game', 2, 5000);
    // One link per pair: the smaller NodeRid connects, so every node holds exactly two connections.
    await waitFor(
      () => nodes.every((n) => n.snapshot().meshes[0]?.connections === 2),
      5000,
      'one connection per pair',
    );
    const [a] = nodes;
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => a!.routeClient.requestToChannel('match', 'who', {}).async()),
    );
    expect(tally(answers)).toEqual({ 'node-b': 100, 'node-c': 100 });
    expect(await a!.routeClient.requestToNode('game', 'node-c', 'ping', {}).async()).toBe('node-c');
  });

  it('a node restarted with a new generation at a new endpoint is found again; the old link goes with its descriptor', async () => {
    const store = { redis: redis.current.url, keyPrefix: freshPrefix() };
    const a = await autoNode(store, 'node-a');
    const b1 = await autoNode(store, 'node-b');
    await a.waitForPeers('game', 1, 5000);
    const oldEndpoint = b1.meshEndpoint('game');
    const events = cleanup.add(new EventCollector(a.events));
    await b1.close();
    const b2 = await autoNode(store, 'node-b');
    expect(b2.meshEndpoint('game')).not.toBe(oldEndpoint);
    await events.next('peer_ready', (e) => e.rid === 'node-b' && e.generation === b2.generation, 5000);
    expect(await a.routeClient.requestToNode('game', 'node-b', 'ping', {}).async()).toBe('node-b');
    await waitFor(
      () => !a.snapshot().meshes[0]?.links.some((l) => l.endpoint === oldEndpoint),
      7000,
      'the old link removed',
    );
  });

  it('a weight change reaches the store with a larger revision', async () => {
    const keyPrefix = freshPrefix();
    const a = await autoNode({ redis: redis.current.url, keyPrefix }, 'node-a');
    const reader = cleanup.add(new RedisLocationStore({ redis: redis.current.url, keyPrefix }));
    const read = async () => (await reader.list('mesh-node', 'game'))[0] as MeshNodeDescriptor;
    expect(await read()).toMatchObject({ rid: 'node-a', revision: 1, endpoint: a.meshEndpoint('game') });
    a.setChannelWeight('match', 0);
    const deadline = Date.now() + 5000;
    while ((await read()).revision < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await read()).toMatchObject({
      revision: 2,
      memberships: [{ channel: 'match', weight: 0, draining: false }],
    });
  });

  it('a node that reads only its manual peers is still reached: the larger NodeRid connects after one full-read interval', async () => {
    const store = { redis: redis.current.url, keyPrefix: freshPrefix(), fullReadIntervalMs: 500 };
    // node-a is the smaller NodeRid but never reads the store; node-b must connect to it.
    const a = await autoNode(store, 'node-a', { discovery: 'manual' });
    const b = await autoNode(store, 'node-b');
    await b.waitForPeers('game', 1, 5000);
    expect(await b.routeClient.requestToNode('game', 'node-a', 'ping', {}).async()).toBe('node-a');
    await a.waitForPeers('game', 1, 5000);
  });
});

describe('a fenced MeshNode refuses new business messages', () => {
  it('with its lease refresh blocked it leaves selection and refuses Node direct (Rejected) until a refresh succeeds', async () => {
    const lease = { ttlMs: 3000, refreshMs: 500, refreshTimeoutMs: 500, marginMs: 1000 };
    const fenced = await autoNode({ redis: redis.current.url, keyPrefix: freshPrefix(), lease }, 'node-f');
    // The caller lists the fenced node by hand: the paused store must not stand in its way.
    const caller = await startNode(cleanup, {
      rid: 'caller',
      peers: [fenced.meshEndpoint('game') as string],
      channels: { match: { role: 'client' } },
    });
    await caller.waitForPeers('game', 1, 5000);
    const events = cleanup.add(new EventCollector(fenced.events));
    await redis.current.pauseClients(4000);
    await events.next('lease', (e) => e.state === 'fenced', 6000);
    const matchCandidates = () =>
      caller.snapshot().meshes[0]?.channels.find((c) => c.channel === 'match')?.candidates;
    // Its memberships are published draining: peers stop selecting it.
    await waitFor(() => matchCandidates() === 0, 2000, 'the fenced node out of selection');
    const channel = await outcome(caller.routeClient.requestToChannel('match', 'who', {}).async());
    expect(channel).toMatchObject({ ok: false, code: 'Unavailable' });
    // Node direct names the node, so it still arrives, and is refused without running.
    const direct = await outcome(caller.routeClient.requestToNode('game', 'node-f', 'ping', {}).async());
    expect(direct).toMatchObject({ ok: false, code: 'Rejected' });
    await events.next('lease', (e) => e.state === 'held', 10000);
    await waitFor(() => matchCandidates() === 1, 2000, 'back in selection');
    expect(await caller.routeClient.requestToNode('game', 'node-f', 'ping', {}).async()).toBe('node-f');
    expect(await caller.routeClient.requestToChannel('match', 'who', {}).async()).toBe('node-f');
  });
});
