import { RETIRE_GRACE_MS } from '../../../../lib/transport/timing.js';
/**
 * The RouteMesh handshake rules of `PeerTable`, against a recording host (no sockets): who is
 * admitted, who is refused, which of two parallel links is kept, and what a loss undoes.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import {
  type MeshNodeState,
  type MeshStateRecord,
  RecordKind,
  encodeMeshState,
  ZLinkEvents,
  decodeFrame,
} from '../../../../lib/core/index.js';
import {
  type OutboundLink,
  type Peer,
  type PeerHost,
  type PeerRoute,
  PeerTable,
} from '../../../../lib/transport/route-mesh/peer-table.js';

const state = (rid: string, overrides: Partial<MeshNodeState> = {}): MeshNodeState => ({
  mesh: 'game',
  rid,
  generation: `${rid}-g1`,
  objectRole: 'none',
  memberships: [],
  revision: 1,
  ...overrides,
});
/** Each run's token (plain ZMTP's proof field): the same for every record of the run. */
const token = (s: MeshNodeState) => Buffer.from(`token of ${s.rid} ${s.generation}`);
const record = (
  kind: MeshStateRecord['kind'],
  s: MeshNodeState,
  proof: Uint8Array | null = token(s),
): MeshStateRecord => ({
  kind,
  ...s,
  ...(proof && { proof }),
});
const hello = (s: MeshNodeState, proof?: Uint8Array) => record(RecordKind.MeshHello, s, proof);
const welcome = (s: MeshNodeState, proof?: Uint8Array) => record(RecordKind.MeshWelcome, s, proof);
/** A connection's routing id: random per connect in real life, and never a NodeRid's. */
const id = (name: string) => Buffer.from(`conn-${name}`, 'utf8');
/** A hello on connection `pipe`, as the MeshNode's receive loop hands it over. */
const sayHello = (table: PeerTable, pipe: Buffer, h: MeshStateRecord) =>
  table.onHello(pipe, table.routeOf(pipe), h);

/** A table for node `own` whose host records what the table asks of it. */
function tableFor(own: MeshNodeState) {
  const events = new ZLinkEvents();
  const log = {
    sent: [] as { pipe: string; kind: number }[],
    gone: [] as { route: PeerRoute; reason: string }[],
    reconnected: [] as string[],
    disconnected: [] as string[],
    changes: 0,
    protocolErrors: [] as string[],
    hellos: [] as string[],
    claims: [] as string[],
  };
  const host: PeerHost = {
    mesh: own.mesh,
    rid: own.rid,
    events,
    ownState: () => own,
    send: (pipe, bytes) =>
      log.sent.push({ pipe: pipe.toString('utf8'), kind: decodeFrame(bytes).records[0]?.kind ?? -1 }),
    routeGone: (route, reason) => log.gone.push({ route, reason }),
    reconnect: (link) => log.reconnected.push(link.endpoint),
    disconnect: (link) => log.disconnected.push(link.endpoint),
    changed: () => log.changes++,
    protocolError: (reason) => log.protocolErrors.push(reason),
    accepts: () => true,
    hello: (link) => log.hellos.push(link.endpoint),
    helloRecord: () => encodeMeshState(RecordKind.MeshHello, own),
    stateRecord: () => encodeMeshState(RecordKind.MeshState, own),
    welcomeRecord: () => encodeMeshState(RecordKind.MeshWelcome, own),
    proofRefusal: () => undefined,
    continues: (peer, s) =>
      peer.proof !== undefined && s.proof !== undefined && Buffer.from(peer.proof).equals(s.proof),
    claimRefused: (rid) => log.claims.push(rid),
  };
  const table = new PeerTable(host);
  const seen: string[] = [];
  events.subscribe((e) => seen.push(e.type));
  return { table, log, seen };
}

/** An outbound link as MeshNode makes it: attempt 1, connected, saying hello. */
function link(table: PeerTable, endpoint: string, expectedRid?: string): OutboundLink {
  const l = table.addLink(endpoint, expectedRid);
  l.attempt = 1;
  l.pipe = Buffer.from(`ep:1.r4nd0m:${endpoint}`, 'utf8');
  table.linkUp(l);
  return l;
}

afterEach(() => {
  jest.useRealTimers();
});

describe('PeerTable', () => {
  it('an acceptor answers every hello with its welcome and admits the peer on the connection the hello came on', () => {
    const { table, log, seen } = tableFor(state('node-b'));
    sayHello(table, id('1'), hello(state('node-a')));
    expect(log.sent).toEqual([{ pipe: 'conn-1', kind: RecordKind.MeshWelcome }]);
    expect(table.peers.get('node-a')?.route.link).toBeUndefined();
    expect(table.peers.get('node-a')?.route.pipe).toEqual(id('1'));
    expect(seen).toEqual(['peer_ready']);
    // A repeated hello (the welcome crossed it) changes nothing but is answered again.
    sayHello(table, id('1'), hello(state('node-a')));
    expect(log.sent).toHaveLength(2);
    expect(seen).toEqual(['peer_ready']);
  });

  it('refuses a hello from another mesh, or from itself (welcome, not admitted)', () => {
    const { table, log } = tableFor(state('node-b'));
    sayHello(table, id('1'), hello(state('node-c', { mesh: 'other' })));
    sayHello(table, id('2'), hello(state('node-b', { generation: 'x' })));
    expect(log.sent.map((s) => s.kind)).toEqual([RecordKind.MeshWelcome, RecordKind.MeshWelcome]);
    expect(table.peers.size).toBe(0);
    expect(log.protocolErrors).toHaveLength(2);
  });

  it('a second connection naming a connected run without its token gets nothing; the peer keeps its route', () => {
    const { table, log, seen } = tableFor(state('node-b'));
    sayHello(table, id('real'), hello(state('node-a')));
    const route = table.peers.get('node-a')?.route;
    sayHello(table, id('intruder'), hello(state('node-a'), Buffer.from('a guess')));
    sayHello(table, id('intruder'), record(RecordKind.MeshHello, state('node-a'), null));
    expect(log.claims).toEqual(['node-a', 'node-a']);
    expect(log.sent.map((s) => s.pipe)).toEqual(['conn-real']);
    expect(table.peers.get('node-a')?.route).toBe(route);
    expect(table.routeOf(id('intruder'))).toBeUndefined();
    expect(seen).toEqual(['peer_ready']);
  });

  it('a connection that is one run speaks for no other: a hello as another NodeRid or generation on it is refused', () => {
    const { table, log } = tableFor(state('node-b'));
    sayHello(table, id('1'), hello(state('node-a')));
    sayHello(table, id('1'), hello(state('node-c')));
    sayHello(table, id('1'), hello(state('node-a', { generation: 'node-a-g2' })));
    expect(log.claims).toEqual(['node-c', 'node-a']);
    expect([...table.peers.keys()]).toEqual(['node-a']);
    expect(table.peers.get('node-a')?.state.generation).toBe('node-a-g1');
    expect(log.sent).toHaveLength(1);
  });

  it('the same run on a new connection of its own (its link restarted) moves the route there; the old one retires', () => {
    jest.useFakeTimers();
    const { table, log, seen } = tableFor(state('node-b'));
    sayHello(table, id('old'), hello(state('node-a')));
    const old = table.peers.get('node-a')?.route;
    sayHello(table, id('new'), hello(state('node-a')));
    expect(table.peers.get('node-a')?.route.pipe).toEqual(id('new'));
    expect(log.sent.map((s) => s.pipe)).toEqual(['conn-old', 'conn-new']);
    jest.advanceTimersByTime(RETIRE_GRACE_MS);
    expect(log.gone.map((g) => g.route)).toEqual([old]);
    expect(seen).toEqual(['peer_ready']);
  });

  it('a welcome naming a connected run without its token refuses the link; the peer keeps its route', () => {
    const { table, log } = tableFor(state('node-b'));
    sayHello(table, id('real'), hello(state('node-a')));
    const route = table.peers.get('node-a')?.route;
    const out = link(table, 'tcp://elsewhere:1');
    table.onWelcome(out, welcome(state('node-a'), Buffer.from('not the token')));
    expect(out.status).toBe('refused');
    expect(log.disconnected).toEqual(['tcp://elsewhere:1']);
    expect(log.claims).toEqual(['node-a']);
    expect(table.peers.get('node-a')?.route).toBe(route);
  });

  it('a run that a later one replaced gets no welcome', () => {
    const { table, log } = tableFor(state('node-b'));
    sayHello(table, id('1'), hello(state('node-a')));
    sayHello(table, id('2'), hello(state('node-a', { generation: 'node-a-g2' })));
    sayHello(table, id('3'), hello(state('node-a')));
    expect(log.sent.map((s) => s.pipe)).toEqual(['conn-1', 'conn-2']);
    expect(table.peers.get('node-a')?.state.generation).toBe('node-a-g2');
  });

  it('a run lost for silence before a later one came is replaced all the same; the same run may come back', () => {
    const { table, log } = tableFor(state('node-b'));
    sayHello(table, id('1'), hello(state('node-a')));
    table.lose(table.peers.get('node-a') as Peer, 'silent for 3000 ms');
    // The run itself comes back (it was only slow): admitted again.
    sayHello(table, id('2'), hello(state('node-a')));
    table.lose(table.peers.get('node-a') as Peer, 'silent for 3000 ms');
    sayHello(table, id('3'), hello(state('node-a', { generation: 'node-a-g2' })));
    // The lost run wakes after its restarted copy said hello: no welcome, the copy stays.
    sayHello(table, id('4'), hello(state('node-a')));
    expect(log.sent.map((s) => s.pipe)).toEqual(['conn-1', 'conn-2', 'conn-3']);
    expect(table.peers.get('node-a')?.state.generation).toBe('node-a-g2');
    expect(log.protocolErrors).toEqual(["hello from generation 'node-a-g1', which a later one replaced"]);
  });

  it('a welcome with an unexpected NodeRid, another mesh, or from an Object Client pair refuses the link for good', () => {
    const own = state('node-a', { objectRole: 'client' });
    const { table, log, seen } = tableFor(own);
    const wrongRid = link(table, 'tcp://h:1', 'node-x');
    table.onWelcome(wrongRid, welcome(state('node-b')));
    const otherMesh = link(table, 'tcp://h:2');
    table.onWelcome(otherMesh, welcome(state('node-c', { mesh: 'other' })));
    const clients = link(table, 'tcp://h:3');
    table.onWelcome(clients, welcome(state('node-d', { objectRole: 'client' })));
    expect([wrongRid.status, otherMesh.status, clients.status]).toEqual(['refused', 'refused', 'refused']);
    expect(log.disconnected).toEqual(['tcp://h:1', 'tcp://h:2', 'tcp://h:3']);
    expect(seen).toEqual(['peer_refused', 'peer_refused', 'peer_refused']);
    expect(table.peers.size).toBe(0);
    // An Object Client with a Server membership is a peer like any other.
    const server = link(table, 'tcp://h:4');
    const match = [{ channel: 'match', weight: 100, draining: false }];
    table.onWelcome(server, welcome(state('node-e', { objectRole: 'client', memberships: match })));
    expect(table.peers.has('node-e')).toBe(true);
  });

  it.each([
    ['the smaller NodeRid keeps its own outbound link', 'node-a', 'node-b', 'outbound'],
    ['the larger NodeRid keeps the link the peer made', 'node-b', 'node-a', 'inbound'],
  ])('both nodes connected: %s; the other route retires after the grace', (_what, ownRid, peerRid, kept) => {
    jest.useFakeTimers();
    const { table, log } = tableFor(state(ownRid));
    const out = link(table, 'tcp://peer:1');
    sayHello(table, id(peerRid), hello(state(peerRid))); // the peer's link arrives first
    table.onWelcome(out, welcome(state(peerRid))); // then our own completes
    const peer = table.peers.get(peerRid);
    expect(peer?.route.link ? 'outbound' : 'inbound').toBe(kept);
    expect(out.status).toBe(kept === 'outbound' ? 'ready' : 'retired');
    expect(log.gone).toEqual([]);
    jest.advanceTimersByTime(RETIRE_GRACE_MS);
    expect(log.gone).toHaveLength(1);
    expect(log.gone[0]?.route).not.toBe(peer?.route);
    expect(log.disconnected).toEqual(kept === 'outbound' ? [] : ['tcp://peer:1']);
    // Losing the peer brings a retired link back, so the pair is not left without one.
    table.lose(peer as NonNullable<typeof peer>, 'test');
    expect(log.reconnected).toEqual(['tcp://peer:1']);
    expect(out.status).toBe('connecting');
  });

  it('a hello with a new lifecycle generation replaces the old peer: its route is gone first', () => {
    const { table, log, seen } = tableFor(state('node-b'));
    sayHello(table, id('1'), hello(state('node-a')));
    const first = table.peers.get('node-a');
    sayHello(table, id('2'), hello(state('node-a', { generation: 'node-a-g2' })));
    expect(log.gone.map((g) => g.route)).toEqual([first?.route]);
    expect(table.peers.get('node-a')?.state.generation).toBe('node-a-g2');
    expect(seen).toEqual(['peer_ready', 'peer_lost', 'peer_ready']);
  });

  it('state records apply only with a larger revision of the same generation', () => {
    const { table, seen } = tableFor(state('node-b'));
    sayHello(table, id('1'), hello(state('node-a')));
    const peer = table.peers.get('node-a') as NonNullable<ReturnType<typeof table.peers.get>>;
    const m = (weight: number) => [{ channel: 'match', weight, draining: false }];
    table.onState(
      peer.route,
      record(RecordKind.MeshState, state('node-a', { revision: 3, memberships: m(0) })),
    );
    table.onState(
      peer.route,
      record(RecordKind.MeshState, state('node-a', { revision: 2, memberships: m(50) })),
    );
    table.onState(
      peer.route,
      record(
        RecordKind.MeshState,
        state('node-a', { generation: 'zombie', revision: 9, memberships: m(70) }),
      ),
    );
    expect(peer.state.memberships).toEqual(m(0));
    expect(seen).toEqual(['peer_ready', 'peer_state']);
  });

  it('a lost outbound link loses its peer and restarts the link; a pipe of an earlier attempt is no link', () => {
    const { table, log } = tableFor(state('node-a'));
    const out = link(table, 'tcp://peer:1');
    table.onWelcome(out, welcome(state('node-b')));
    expect(table.linkOf(Buffer.from('ep:1.r4nd0m:tcp://peer:1'))).toBe(out);
    expect(table.linkOf(Buffer.from('ep:0.r4nd0m:tcp://peer:1'))).toBeUndefined();
    expect(table.linkOf(Buffer.from('ep:1.guess:tcp://peer:1'))).toBeUndefined();
    table.linkDown(out);
    expect(table.peers.size).toBe(0);
    expect(log.gone).toHaveLength(1);
    expect(log.reconnected).toEqual(['tcp://peer:1']);
  });
});
