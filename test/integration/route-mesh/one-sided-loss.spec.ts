/**
 * Found by `npm run chaos` (issue 9): a RouteMesh link that one side dropped while the other still held
 * it ready. A server SIGSTOPped for ~3.3 s judged its client peer silent the moment it resumed (its
 * overdue ping timer ran before it read what the client had sent), dropped it and connected to it
 * again; the client, whose own link had never gone quiet, kept that link and retired the new one. The
 * server then dropped every request on the client's link as "not a ready peer", while its pings on the
 * retiring link kept the client from noticing: ~10 s of requests to a healthy server ended `Timeout`.
 * Two fixes, one test each: the smaller NodeRid says hello again on the link it keeps, and a node does
 * not count the time it was itself stopped as its peers' silence.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { MeshNode } from '../../../lib/transport/index.js';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, freePort, outcome, waitFor } from '../../helpers/index.js';
import { FakePeer, endpointOf, fakeState, startNode, tally } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const at = (port: number) => `tcp://127.0.0.1:${port}`;

/** The runtime's MeshNode (internal: the test makes one side drop its peer on its own). */
function meshNode(runtime: ZLinkRuntime, mesh = 'game'): MeshNode {
  const node = (runtime as unknown as { meshes: { nodes: Map<string, MeshNode> } }).meshes.nodes.get(mesh);
  if (!node) throw new Error(`no MeshNode '${mesh}'`);
  return node;
}

describe('a link one side dropped while the other held it ready', () => {
  it('the larger NodeRid lost the smaller and connected again: the smaller says hello on its kept link, and its requests are answered', async () => {
    const [pa, pb] = [await freePort(), await freePort()];
    const [a, b] = await Promise.all([
      startNode(cleanup, { rid: 'node-a', port: pa, peers: [{ endpoint: at(pb), rid: 'node-b' }] }),
      startNode(cleanup, {
        rid: 'node-b',
        port: pb,
        peers: [at(pa)],
        nodeHandlers: [['request', 'whoami', () => 'node-b'] as const],
      }),
    ]);
    // One link per pair: node-a's (the smaller NodeRid's) ready, node-b's own retired.
    const settled = (): boolean =>
      a.snapshot().meshes[0]?.links[0]?.status === 'ready' &&
      b.snapshot().meshes[0]?.links[0]?.status === 'retired' &&
      b.snapshot().meshes[0]?.peers[0]?.via === 'inbound';
    await waitFor(settled, 8000, 'one link per pair');

    // node-b drops node-a on its own (as after its process was stopped); node-a still holds its link.
    const bNode = meshNode(b);
    const peerA = bNode.table.peers.get('node-a');
    if (!peerA) throw new Error('node-b has no peer node-a');
    const events = new EventCollector(b.events);
    bNode.table.lose(peerA, 'judged silent (test)');
    // node-b connects again on its own link and is admitted by node-a's welcome; node-a keeps its own
    // link for its requests, and says hello on it again, ahead of them.
    await events.next('peer_ready', (e) => e.rid === 'node-a', 5000);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        outcome(a.routeClient.requestToNode('game', 'node-b', 'whoami', 0).async({ timeoutMs: 1500 })),
      ),
    );
    // Before the fix: Timeout × 20 (node-b dropped them as "not a ready peer").
    expect(tally(answers.map((r) => (r.ok ? r.value : r.code)))).toEqual({ 'node-b': 20 });
    // node-b is back on node-a's link, its own retired again.
    expect(b.snapshot().meshes[0]?.peers).toMatchObject([{ rid: 'node-a', via: 'inbound' }]);
    expect(b.events.count('protocol_error')).toBe(0);
  });

  it('a node whose own process did not run for 3.5 s does not judge its peers silent for that time', async () => {
    const a = await startNode(cleanup, { rid: 'node-a' });
    const fake = cleanup.add(new FakePeer(fakeState('lively')));
    await fake.connect(endpointOf(a));
    fake.pingEvery(200);
    await a.waitForPeers('game', 1);
    const events = new EventCollector(a.events);
    // The whole process stops (as under SIGSTOP, or a long pause): no timer, no read. zeromq's own
    // threads go on, so the connection itself stays up.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3500);
    // The overdue ping timer runs before the pings that arrived meanwhile are read; wait past the
    // next two ticks.
    await new Promise((r) => setTimeout(r, 2500));
    expect(events.of('peer_lost')).toEqual([]);
    expect(a.snapshot().meshes[0]?.peers).toMatchObject([{ rid: 'lively' }]);
  }, 15000);
});
