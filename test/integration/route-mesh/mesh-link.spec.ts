/**
 * The MeshLink port over a real MeshNode (issue 16; port in core/mesh-link.ts): ready peers with
 * their generation, object role and hosted types; object records sent to a peer's current route
 * and handed whole to the receiver's listener, never to a channel or Node direct handler; sends
 * pinned to a run that is gone refused; and without a listener, the kinds dropped and counted as
 * on a node without an object layer. Real MeshNodes on 127.0.0.1, ports from the OS.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  ChannelHandlerRegistry,
  type InboundObjectRecord,
  JobQueue,
  type MeshLink,
  type MeshPeerEvent,
  type NormalizedMesh,
  NodeHandlerRegistry,
  type ObjectRole,
  PendingRequests,
  RecordKind,
  WIRE_VERSION,
  ZLinkEvents,
  encodePayload,
  encodeMeshState,
  normalizeOptions,
} from '../../../lib/core/index.js';
import { MeshNode } from '../../../lib/transport/index.js';
import { Cleanup, EventCollector, freePort, outcome, waitFor } from '../../helpers/index.js';
import { FakePeer, fakeState, listen } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

interface NodeSpec {
  readonly rid: string;
  readonly port?: number;
  readonly objectRole?: ObjectRole;
  readonly objectTypes?: readonly string[];
  readonly peers?: readonly { endpoint: string; rid: string }[];
  readonly sendQueueLimit?: number;
}

interface Started {
  readonly node: MeshNode;
  readonly link: MeshLink;
  readonly events: ZLinkEvents;
  /** Every channel or Node direct handler that ran on this node. */
  readonly ran: string[];
  /** What this node's link told its listeners, from the start. */
  readonly peerEvents: MeshPeerEvent[];
}

/**
 * A bound MeshNode of mesh `game` with a Server membership on `match` and handlers for packet `who`
 * (channel and Node direct, send and request) that record that they ran. Its link is made before any
 * peer can be ready; `connectPeers()` is the caller's.
 */
async function startMeshNode(spec: NodeSpec): Promise<Started> {
  const { rid } = spec;
  const options = normalizeOptions({
    meshes: {
      game: {
        rid,
        listen: { ...listen, port: spec.port ?? 0 },
        peers: [...(spec.peers ?? [])],
        channels: { match: { role: 'server' } },
      },
    },
  });
  // objectRole needs a Location Store in the options; the MeshNode itself does not use one.
  const mesh: NormalizedMesh = {
    ...(options.meshes.get('game') as NormalizedMesh),
    objectRole: spec.objectRole ?? 'none',
  };
  const ran: string[] = [];
  const channelHandlers = new ChannelHandlerRegistry();
  const nodeHandlers = new NodeHandlerRegistry();
  for (const kind of ['send', 'request'] as const) {
    const source = `${rid}.${kind}`;
    channelHandlers.register({
      channel: 'match',
      kind,
      packet: 'who',
      handler: () => ran.push('channel'),
      source,
    });
    nodeHandlers.register({ mesh: 'game', kind, packet: 'who', handler: () => ran.push('node'), source });
  }
  const events = new ZLinkEvents();
  const node = cleanup.add(
    new MeshNode({
      mesh,
      rid,
      generation: randomUUID(),
      channelHandlers,
      nodeHandlers,
      jobs: new JobQueue(16),
      events,
      pending: new PendingRequests(),
      sendQueueLimit: spec.sendQueueLimit ?? 1000,
      ...(spec.objectTypes && { objectTypes: spec.objectTypes }),
    }),
  );
  const link = node.objectLink();
  const peerEvents: MeshPeerEvent[] = [];
  link.onPeer((e) => peerEvents.push(e));
  await node.bind();
  return { node, link, events, ran, peerEvents };
}

const peerOf = (s: Started) => ({ endpoint: s.node.localEndpoint, rid: s.node.rid });

/** Shaped like a call a handler of the receiver serves (correlation, channel, packet, payload). */
const objectRecord = (kind: number, n: number): Uint8Array =>
  encodePayload([WIRE_VERSION, kind, n, 'match', 'who', null, encodePayload({ n })]);

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

/** Collects what a link's record listener receives; `stop()` unsubscribes. */
function collect(link: MeshLink): { readonly got: InboundObjectRecord[]; readonly stop: () => void } {
  const got: InboundObjectRecord[] = [];
  return { got, stop: link.onRecord((r) => got.push(r)) };
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

describe('MeshLink over a MeshNode', () => {
  it('peers come up with their generation, object role and hosted types; objectServers picks by type', async () => {
    const b = await startMeshNode({ rid: 'node-b', objectRole: 'server', objectTypes: ['room'] });
    const c = await startMeshNode({ rid: 'node-c', objectRole: 'server', objectTypes: ['lobby', 'room-x'] });
    const a = await startMeshNode({ rid: 'node-a', objectRole: 'client', peers: [peerOf(b), peerOf(c)] });
    a.node.connectPeers();
    await a.node.waitFor({ peers: 2 }, 5000);
    await b.node.waitFor({ peers: 1 }, 5000);

    const server = (s: Started, objectTypes: string[]) => ({
      rid: s.node.rid,
      generation: s.node.state.generation,
      objectRole: 'server',
      objectTypes,
      topics: [],
    });
    expect(a.peerEvents).toHaveLength(2);
    expect(a.peerEvents).toEqual(
      expect.arrayContaining([
        { type: 'up', peer: server(b, ['room']) },
        { type: 'up', peer: server(c, ['lobby', 'room-x']) },
      ]),
    );
    expect(b.peerEvents).toEqual([
      {
        type: 'up',
        peer: {
          rid: 'node-a',
          generation: a.node.state.generation,
          objectRole: 'client',
          objectTypes: [],
          topics: [],
        },
      },
    ]);
    expect(a.link.self).toEqual({ rid: 'node-a', generation: a.node.state.generation });
    expect(a.link.mesh).toBe('game');

    expect(a.link.objectServers('room')).toEqual([server(b, ['room'])]);
    expect(a.link.objectServers('lobby')).toEqual([server(c, ['lobby', 'room-x'])]);
    expect(a.link.objectServers('nothing')).toEqual([]);
    expect(
      a.link
        .objectServers()
        .map((p) => p.rid)
        .sort(),
    ).toEqual(['node-b', 'node-c']);
    expect(
      a.link
        .peers()
        .map((p) => p.rid)
        .sort(),
    ).toEqual(['node-b', 'node-c']);
    // The client announces no types: its state is the one a node before the object layer sends.
    expect('objectTypes' in a.node.state).toBe(false);
    expect(b.link.objectServers()).toEqual([]);
  });

  it("an object record reaches the receiver's listener whole, with the sender's address, and no handler", async () => {
    const b = await startMeshNode({ rid: 'node-b', objectRole: 'server', objectTypes: ['room'] });
    const a = await startMeshNode({ rid: 'node-a', objectRole: 'client', peers: [peerOf(b)] });
    const inbox = collect(b.link);
    a.node.connectPeers();
    await a.node.waitFor({ peers: 1 }, 5000);
    await b.node.waitFor({ peers: 1 }, 5000);

    const to = a.link.objectServers('room')[0];
    if (!to) throw new Error('node-b is not listed as hosting room');
    // One turn: the pump sends them as one batch, and the receiver splits it.
    const sent = [
      objectRecord(RecordKind.ObjectRequest, 1),
      objectRecord(RecordKind.ObjectSend, 2),
      objectRecord(RecordKind.MessageFollow, 3),
    ];
    expect(a.link.send(to, sent[0] as Uint8Array)).toBe(true);
    expect(a.link.send(to, sent[1] as Uint8Array)).toBe(true);
    expect(a.link.send('node-b', sent[2] as Uint8Array)).toBe(true);
    await waitFor(() => inbox.got.length >= 3, 5000, 'three object records at node-b');

    const from = { rid: 'node-a', generation: a.node.state.generation };
    expect(inbox.got.map((r) => ({ kind: r.kind, from: r.from }))).toEqual([
      { kind: RecordKind.ObjectRequest, from },
      { kind: RecordKind.ObjectSend, from },
      { kind: RecordKind.MessageFollow, from },
    ]);
    inbox.got.forEach((r, i) => expect(sameBytes(r.bytes, sent[i] as Uint8Array)).toBe(true));
    expect(b.ran).toEqual([]);
    expect(b.events.count('protocol_error')).toBe(0);
    expect(b.events.count('delivery')).toBe(0);

    // Unsubscribed, the node is one without an object layer again: dropped and counted, still no handler.
    inbox.stop();
    const events = new EventCollector(b.events);
    expect(a.link.send(to, objectRecord(RecordKind.ObjectRequest, 4))).toBe(true);
    const dropped = await events.next('protocol_error', undefined, 5000);
    expect(dropped.reason).toContain('(ObjectRequest) is reserved');
    expect(inbox.got).toHaveLength(3);
    expect(b.ran).toEqual([]);
  });

  it('object records from a node that is not a ready peer are dropped and counted', async () => {
    const b = await startMeshNode({ rid: 'node-b', objectRole: 'server', objectTypes: ['room'] });
    const inbox = collect(b.link);
    const events = new EventCollector(b.events);
    // Another MeshName: answered (so it knows), refused, never a peer.
    const stranger = cleanup.add(new FakePeer(fakeState('stranger', { mesh: 'other' })));
    await stranger.connect(b.node.localEndpoint, encodeMeshState(RecordKind.MeshHello, stranger.state));
    await waitFor(
      () => stranger.received.some((r) => r.kind === RecordKind.MeshWelcome),
      5000,
      'the welcome',
    );
    await stranger.send(objectRecord(RecordKind.ObjectRequest, 1));
    const dropped = await events.next('protocol_error', (e) => e.reason.includes('not a ready peer'), 5000);
    expect(dropped.reason).toBe('ObjectRequest: from a node that is not a ready peer');
    expect(inbox.got).toEqual([]);
    expect(b.ran).toEqual([]);
  });

  it('a send pinned to a run that is gone is a RouteError; the loss is down, the new run up', async () => {
    const port = await freePort();
    const b1 = await startMeshNode({ rid: 'node-b', port, objectRole: 'server', objectTypes: ['room'] });
    const a = await startMeshNode({
      rid: 'node-a',
      objectRole: 'client',
      peers: [{ endpoint: `tcp://127.0.0.1:${port}`, rid: 'node-b' }],
    });
    a.node.connectPeers();
    await a.node.waitFor({ peers: 1 }, 5000);
    const first = { rid: 'node-b', generation: b1.node.state.generation };

    await b1.node.close();
    await waitFor(() => a.peerEvents.some((e) => e.type === 'down'), 5000, 'node-b down');
    expect(errorCode(() => a.link.send(first, objectRecord(RecordKind.ObjectSend, 1)))).toBe('RouteError');
    expect(a.link.peers()).toEqual([]);

    const b2 = await startMeshNode({ rid: 'node-b', port, objectRole: 'server', objectTypes: ['room'] });
    const inbox = collect(b2.link);
    await waitFor(() => a.peerEvents.filter((e) => e.type === 'up').length === 2, 10000, 'node-b up again');
    const second = { rid: 'node-b', generation: b2.node.state.generation };
    expect(second.generation).not.toBe(first.generation);
    expect(a.peerEvents.map((e) => ({ type: e.type, generation: e.peer.generation }))).toEqual([
      { type: 'up', generation: first.generation },
      { type: 'down', generation: first.generation },
      { type: 'up', generation: second.generation },
    ]);
    const down = a.peerEvents[1] as MeshPeerEvent & { type: 'down' };
    expect(down.peer).toEqual(first);
    expect(down.reason).toMatch(/lost|gone|restarted|silent/);

    expect(errorCode(() => a.link.send(first, objectRecord(RecordKind.ObjectSend, 2)))).toBe('RouteError');
    expect(a.link.send(second, objectRecord(RecordKind.ObjectSend, 3))).toBe(true);
    await waitFor(() => inbox.got.length === 1, 5000, 'the record at the new run');
    expect(inbox.got[0]?.from).toEqual(a.link.self);

    expect(errorCode(() => a.link.send('node-z', objectRecord(RecordKind.ObjectSend, 4)))).toBe('RouteError');
    expect(errorCode(() => a.link.send('node-a', objectRecord(RecordKind.ObjectSend, 5)))).toBe(
      'InvalidArgument',
    );
    await a.node.close();
    expect(errorCode(() => a.link.send(second, objectRecord(RecordKind.ObjectSend, 6)))).toBe('Shutdown');
    const waited = await outcome(a.link.waitForSpace(1000));
    expect(waited.ok ? 'resolved' : waited.code).toBe('Shutdown');
  });

  it('a full send queue refuses (false, nothing queued) until there is space again', async () => {
    const b = await startMeshNode({ rid: 'node-b', objectRole: 'server', objectTypes: ['room'] });
    const a = await startMeshNode({
      rid: 'node-a',
      objectRole: 'client',
      peers: [peerOf(b)],
      sendQueueLimit: 2,
    });
    const inbox = collect(b.link);
    a.node.connectPeers();
    await a.node.waitFor({ peers: 1 }, 5000);
    // Queued records leave at the end of the turn: within one, the queue fills.
    const offered = [1, 2, 3].map((n) => a.link.send('node-b', objectRecord(RecordKind.ObjectSend, n)));
    expect(offered).toEqual([true, true, false]);
    await a.link.waitForSpace(5000);
    expect(a.link.send('node-b', objectRecord(RecordKind.ObjectSend, 4))).toBe(true);
    await waitFor(() => inbox.got.length === 3, 5000, 'the three queued records');
  });

  it('advertised topics reach every ready peer as changed, and a peer that comes later in its up; the same set sends nothing', async () => {
    const b = await startMeshNode({ rid: 'node-b', objectRole: 'server', objectTypes: ['room'] });
    const a = await startMeshNode({ rid: 'node-a', objectRole: 'client', peers: [peerOf(b)] });
    a.node.connectPeers();
    await a.node.waitFor({ peers: 1 }, 5000);
    const topics = [
      { channel: 'news', topic: 'milestone' },
      { channel: 'news', topic: 'weather' },
    ];
    b.link.advertise(topics);
    await waitFor(() => a.peerEvents.length === 2, 5000, "b's advertisement at a");
    expect(a.peerEvents[1]).toMatchObject({ type: 'changed', peer: { rid: 'node-b', topics } });
    expect(a.link.peers()[0]?.topics).toEqual(topics);
    const revision = b.node.state.revision;
    b.link.advertise([...topics]);
    expect(b.node.state.revision).toBe(revision);

    const c = await startMeshNode({ rid: 'node-c', objectRole: 'client', peers: [peerOf(b)] });
    c.node.connectPeers();
    await c.node.waitFor({ peers: 1 }, 5000);
    expect(c.peerEvents).toEqual([
      expect.objectContaining({ type: 'up', peer: expect.objectContaining({ topics }) }),
    ]);

    b.link.advertise([]);
    await waitFor(() => a.peerEvents.length === 3, 5000, "b's withdrawal at a");
    expect(a.peerEvents[2]).toMatchObject({ type: 'changed', peer: { rid: 'node-b', topics: [] } });
    expect(b.node.state.topics).toBeUndefined();
  });

  it('sendToEach queues one record per listed ready peer, skips a run that is gone, and refuses a full queue', async () => {
    const b = await startMeshNode({ rid: 'node-b', objectRole: 'server', objectTypes: ['room'] });
    const c = await startMeshNode({ rid: 'node-c', objectRole: 'server', objectTypes: ['room'] });
    const a = await startMeshNode({
      rid: 'node-a',
      objectRole: 'client',
      peers: [peerOf(b), peerOf(c)],
      sendQueueLimit: 2,
    });
    const inboxB = collect(b.link);
    const inboxC = collect(c.link);
    a.node.connectPeers();
    await a.node.waitFor({ peers: 2 }, 5000);
    const runs = a.link.peers().map((p) => ({ rid: p.rid, generation: p.generation }));
    const gone = { rid: 'node-b', generation: 'an-old-run' };
    const record = objectRecord(RecordKind.SpotEvent, 1);
    expect(a.link.sendToEach([...runs, gone], record)).toBe(2);
    // Two records queued fill the queue: the next set is refused whole, nothing queued.
    expect(a.link.sendToEach(runs, record)).toBe(false);
    await a.link.waitForSpace(5000);
    expect(a.link.sendToEach(runs, objectRecord(RecordKind.SpotEvent, 2))).toBe(2);
    await waitFor(() => inboxB.got.length === 2 && inboxC.got.length === 2, 5000, 'two records at each');
    expect(inboxB.got.map((r) => r.kind)).toEqual([RecordKind.SpotEvent, RecordKind.SpotEvent]);
    expect(sameBytes(inboxC.got[0]?.bytes ?? new Uint8Array(), record)).toBe(true);
  });
});
