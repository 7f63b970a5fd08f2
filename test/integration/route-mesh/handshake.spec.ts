/**
 * RouteMesh peers (issue 4 item 2, docs/protocol.md#mesh-join): a handshake on the real connection before ready, one
 * logical link per pair, refusals that close a link for good, and what a node does with a peer's
 * bad input.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { RecordKind, encodeMeshRequest, encodePayload } from '../../../lib/core/index.js';
import { Cleanup, EventCollector, freePort, outcome, waitFor } from '../../helpers/index.js';
import { FakePeer, endpointOf, fakeState, startNode, tally, who } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const at = (port: number) => `tcp://127.0.0.1:${port}`;
const server = (rid: string, port?: number) => ({
  rid,
  port,
  channels: { match: { role: 'server' as const } },
  handlers: [['match', 'request', 'who', who(rid)] as const],
  nodeHandlers: [['request', 'whoami', () => rid] as const],
});

describe('peer handshake', () => {
  it('two nodes that list each other end with one link, the one the smaller NodeRid initiated; calls flow both ways throughout', async () => {
    const [pa, pb] = [await freePort(), await freePort()];
    const [a, b] = await Promise.all([
      startNode(cleanup, { ...server('node-a', pa), peers: [{ endpoint: at(pb), rid: 'node-b' }] }),
      startNode(cleanup, { ...server('node-b', pb), peers: [at(pa)] }),
    ]);
    await a.waitForPeers('game', 1);
    await b.waitForPeers('game', 1);
    expect(await a.routeClient.requestToNode('game', 'node-b', 'whoami', 0).async()).toBe('node-b');
    expect(await b.routeClient.requestToChannel('match', 'who', 0).async()).toBe('node-a');
    // Either side may connect first (the other's first attempt can meet a port not bound yet), so
    // wait for the final state: the smaller RID's link ready, the other retired and closed.
    const settled = (): boolean => {
      const [ma, mb] = [a.snapshot().meshes[0], b.snapshot().meshes[0]];
      return (
        ma?.links[0]?.status === 'ready' &&
        mb?.links[0]?.status === 'retired' &&
        ma.connections === 1 &&
        mb.connections === 1
      );
    };
    await waitFor(settled, 8000, 'one link per pair').catch((e: unknown) => {
      throw new Error(`${String(e)}: ${JSON.stringify([a.snapshot().meshes[0], b.snapshot().meshes[0]])}`);
    });
    const [sa, sb] = [a.snapshot().meshes[0], b.snapshot().meshes[0]];
    expect(sa?.peers).toMatchObject([{ rid: 'node-b', via: 'outbound' }]);
    expect(sb?.peers).toMatchObject([{ rid: 'node-a', via: 'inbound' }]);
    expect(sa?.links).toMatchObject([{ status: 'ready', peerRid: 'node-b' }]);
    expect(sb?.links).toMatchObject([{ status: 'retired', peerRid: 'node-a' }]);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => b.routeClient.requestToNode('game', 'node-a', 'whoami', 0).async()),
    );
    expect(tally(answers)).toEqual({ 'node-a': 50 });
  });

  it('a peer whose NodeRid differs from the configured one is refused before ready, for good', async () => {
    const b = await startNode(cleanup, server('node-b'));
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [{ endpoint: endpointOf(b), rid: 'node-x' }],
      channels: { match: { role: 'client' } },
    });
    const events = new EventCollector(a.events);
    const refused = await events.next('peer_refused', undefined, 5000);
    expect(refused.reason).toContain("expected NodeRid 'node-x'");
    expect(a.snapshot().meshes[0]?.peers).toEqual([]);
    expect(a.snapshot().meshes[0]?.links).toMatchObject([{ status: 'refused' }]);
    expect(await outcome(a.routeClient.requestToChannel('match', 'who', 0).async())).toMatchObject({
      code: 'NotFound',
    });
  });

  it('a node of another MeshName is refused', async () => {
    const b = await startNode(cleanup, { ...server('node-b'), mesh: 'other' });
    const a = await startNode(cleanup, { rid: 'node-a', peers: [endpointOf(b, 'other')] });
    const refused = await new EventCollector(a.events).next('peer_refused', undefined, 5000);
    expect(refused.reason).toContain("MeshName 'other'");
    expect(b.snapshot().meshes[0]?.peers).toEqual([]);
  });

  it('an Object Client peer is no Node direct target (NotFound), but its Server memberships still serve select-one', async () => {
    const a = await startNode(cleanup, { rid: 'node-a', channels: { match: { role: 'client' } } });
    const fake = cleanup.add(
      new FakePeer(
        fakeState('object-client', {
          objectRole: 'client',
          memberships: [{ channel: 'match', weight: 100, draining: false }],
        }),
      ),
    );
    await fake.connect(endpointOf(a));
    await a.waitForPeers('game', 1);
    await waitFor(() => fake.received.some((r) => r.kind === RecordKind.MeshWelcome), 3000, 'welcome');
    expect(await outcome(a.routeClient.requestToNode('game', 'object-client', 'x', 0).async())).toMatchObject(
      {
        code: 'NotFound',
      },
    );
    await a.routeClient.sendToChannel('match', 'm', 0).async();
    await waitFor(() => fake.received.some((r) => r.kind === RecordKind.MeshSend), 3000, 'the send');
  });

  it("a second connection announcing a connected node's NodeRid as its routing id and copying its hello gets nothing and takes nothing over (plain ZMTP)", async () => {
    const b = await startNode(cleanup, server('node-b'));
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b)],
      nodeHandlers: [['request', 'whoami', () => 'node-a'] as const],
    });
    await a.waitForPeers('game', 1);
    await b.waitForPeers('game', 1);
    const events = new EventCollector(b.events);
    const intruder = cleanup.add(new FakePeer(fakeState('node-a', { generation: a.generation })));
    await intruder.connect(endpointOf(b));
    const refused = await events.next('security_refused', (e) => e.reason === 'ridInUse', 3000);
    expect(refused).toMatchObject({ route: 'route-mesh', peerRid: 'node-a' });
    expect(b.events.count('security_refused:ridInUse')).toBe(1);
    // The real node-a keeps its route: b's calls to it are answered by it, and none reaches the intruder.
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => b.routeClient.requestToNode('game', 'node-a', 'whoami', 0).async()),
    );
    expect(tally(answers)).toEqual({ 'node-a': 20 });
    expect(intruder.received).toEqual([]);
    expect(b.snapshot().meshes[0]?.peers).toMatchObject([{ rid: 'node-a', generation: a.generation }]);
  });

  it('malformed frames and business records from a node that never said hello are dropped and counted; the node keeps serving', async () => {
    const b = await startNode(cleanup, server('node-b'));
    const events = new EventCollector(b.events);
    const stranger = cleanup.add(new FakePeer(fakeState('stranger')));
    await stranger.connect(endpointOf(b), encodeMeshRequest(1, 'match', 'who', undefined, encodePayload(0)));
    await stranger.sendRaw([Uint8Array.of(0xc1, 0xff)]);
    await stranger.sendRaw([Uint8Array.of(1), Uint8Array.of(2)]);
    await waitFor(() => b.events.count('protocol_error') >= 3, 3000, 'three protocol errors');
    expect(
      events
        .of('protocol_error')
        .map((e) => e.reason)
        .join('\n'),
    ).toContain('not a ready peer');
    expect(stranger.received).toEqual([]);
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b)],
      channels: { match: { role: 'client' } },
    });
    await a.waitForCandidates('match', 1);
    expect(await a.routeClient.requestToChannel('match', 'who', 0).async()).toBe('node-b');
  });
});
