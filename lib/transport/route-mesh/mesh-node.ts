import type { Router } from 'zeromq';
import { ZLinkError } from '../../core/errors.js';
import {
  type MeshMembership,
  type MeshNodeState,
  type MulticastTopic,
  RecordKind,
  decodeFrame,
} from '../../core/wire/index.js';
import type { MeshSnapshot } from '../../core/observe/index.js';
import { RESOLVED } from '../../core/calls/index.js';
import type { MeshLink, MeshNodeDescriptor } from '../../core/ports/index.js';
import {
  ListenAddress,
  ReadProgress,
  SocketPump,
  afterQueuedReads,
  hasFrames,
  meshRouter,
} from '../io/index.js';
import { dropUnmatchedReply, settleReply } from '../inbound/index.js';
import { type MeshCallHost, MeshCalls, type MeshWait } from './mesh-calls.js';
import { MeshCandidates } from './mesh-candidates.js';
import { DiscoveredPeers } from './discovered-peers.js';
import { MeshInbound } from './mesh-inbound.js';
import { MeshLiveness } from './mesh-liveness.js';
import type { MeshNodeConfig } from './mesh-node-config.js';
import { MeshObjectLink, sameTopics } from './mesh-object-link.js';
import { meshSnapshot } from './mesh-snapshot.js';
import { type MeshStateRecords, initialMeshState, meshStateRecords } from './mesh-state.js';
import { LinkSockets } from './mesh-socket.js';
import { MeshCurve } from './mesh-curve.js';
import { MeshIdentity } from './mesh-identity.js';
import { MeshConnections } from './mesh-watch.js';
import { type OutboundLink, type PeerHost, type PeerRoute, PeerTable } from './peer-table.js';
import { HELLO_RETRY_MS, LOSS_READ_GRACE_MS } from '../timing.js';

export type { MeshNodeConfig };

/**
 * One MeshNode: one ROUTER, bound once, from which outbound peer links are also made
 * (ROUTER→ROUTER); a connection is known by a random routing id, and by a NodeRid only once its
 * hello was proven (see `PeerTable`). Every ChannelName of the mesh and Node direct share it:
 * registering a channel adds no socket and no connection (docs/protocol.md#arrangements).
 */
export class MeshNode {
  /** Node direct and ChannelName calls from this node (the runtime submits them here). */
  readonly calls: MeshCalls;
  /** @internal the peers and links; read through `snapshot()` and `waitFor()` (a test drops a peer here). */
  readonly table: PeerTable;
  private readonly router: Router;
  private readonly address: ListenAddress;
  private readonly sockets: LinkSockets;
  private readonly pump: SocketPump;
  private readonly candidates: MeshCandidates;
  private readonly liveness: MeshLiveness;
  private readonly inbound: MeshInbound;
  private readonly discovered: DiscoveredPeers;
  private link: MeshObjectLink | undefined;
  /** CURVE's keys and proofs (see `MeshCurve`); undefined in plain ZMTP. */
  private readonly curve: MeshCurve | undefined;
  /** What hellos and welcomes prove, either way (see `MeshIdentity`). */
  private readonly identity: MeshIdentity;
  private readonly records: MeshStateRecords;
  private unzap: (() => Promise<void>) | undefined;
  private own: MeshNodeState;
  private closed = false;
  private drained = false;
  /** The ROUTER's connection events: links up and down, accepted ones counted, refusals reported. */
  private readonly connections: MeshConnections;
  private readonly loops: Promise<void>[] = [];
  private readonly reads = new ReadProgress();

  constructor(private readonly config: MeshNodeConfig) {
    const { mesh, rid, generation, events } = config;
    const self = { rid, generation };
    this.curve = config.curve && new MeshCurve(config.curve, mesh, self, events, config.unlisted);
    this.identity = new MeshIdentity(this.curve, mesh.mesh, events);
    this.records = meshStateRecords(() => this.own, this.identity);
    const curve = this.curve && { ...this.curve.keys, zapDomain: this.curve.domain };
    this.router = meshRouter(mesh.listen.bindHost.includes(':'), curve);
    this.address = new ListenAddress(mesh.listen);
    const serverKey = (endpoint: string) => this.curve?.connectKey(endpoint);
    this.sockets = new LinkSockets(this.router, serverKey, () => this.closed);
    this.pump = new SocketPump(this.router, config.sendQueueLimit, `mesh ${mesh.mesh}`, {
      onUnreachable: (dest) => this.table.unreachable(dest),
    });
    this.own = initialMeshState(mesh, rid, generation, config.objectTypes);
    this.table = new PeerTable(this.peerHost());
    this.liveness = new MeshLiveness(this.table, this.pump);
    const { table, liveness, sockets } = this;
    this.connections = new MeshConnections({
      mesh: mesh.mesh,
      table,
      liveness,
      events,
      curve: this.curve,
      disconnect: (link) => sockets.disconnect(link),
      restart: (link) => sockets.restart(link),
    });
    const connect = (link: OutboundLink) => sockets.connect(link);
    const timing = config.discovery ?? { vanishGraceMs: 0, connectAnywayAfterMs: 0 };
    const report = (reason: string) => this.protocolError(reason);
    const own = () => this.own;
    this.discovered = new DiscoveredPeers({ rid, own, table: this.table, connect, report, ...timing });
    this.candidates = new MeshCandidates(mesh.channels.keys());
    this.calls = new MeshCalls(this.callHost(), config.pending, config.events);
    this.inbound = new MeshInbound({
      mesh: mesh.mesh,
      rid,
      serverChannels: this.own.memberships.map((m) => m.channel),
      channelHandlers: config.channelHandlers,
      nodeHandlers: config.nodeHandlers,
      jobs: config.jobs,
      events,
      sourceRid: (pipe) => this.table.routeOf(pipe)?.peer.rid ?? pipe.toString('utf8'),
      reply: (pipe, record) => this.pump.force(record, pipe),
      tracing: config.tracing,
    });
  }

  get mesh(): string {
    return this.config.mesh.mesh;
  }

  get rid(): string {
    return this.config.rid;
  }

  get state(): MeshNodeState {
    return this.own;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get endpoint(): string {
    return this.address.endpoint;
  }

  get localEndpoint(): string {
    return this.address.local;
  }

  /** Its identity, links, peers and channels' select-one state, at this moment. */
  snapshot(): MeshSnapshot {
    const { own, endpoint, table, candidates } = this;
    const { accepted } = this.connections;
    const queued = this.pump.queued;
    const activeHandlers = this.inbound.activeHandlers;
    return meshSnapshot({ own, endpoint, accepted, activeHandlers, queued, table, candidates });
  }

  /**
   * Resolves once `count` peers are ready (`{ peers: count }`) or the ChannelName has `count`
   * selectable candidates (`{ channel, candidates: count }`); looks again at every peer change, never
   * polls. Ends `Timeout` past `timeoutMs`, or at once when the node has closed.
   */
  waitFor(what: MeshWait, timeoutMs: number): Promise<void> {
    return this.calls.waitFor(what, timeoutMs);
  }

  /** The node's one MeshLink (made on first use): the object layer's way onto this mesh. */
  objectLink(): MeshLink {
    const { mesh, rid, pump, protocolError } = this;
    const self = { rid, generation: this.config.generation };
    const isClosed = () => this.closed;
    const advertise = (topics: readonly MulticastTopic[]) => this.advertise(topics);
    const host = { mesh, self, pump, protocolError, peers: this.table.peers, isClosed, advertise };
    return (this.link ??= new MeshObjectLink(host));
  }

  /** The node's Logical Multicast pairs change: a larger revision reaches every ready peer. */
  private advertise(topics: readonly MulticastTopic[]): void {
    if (this.closed || sameTopics(this.own.topics ?? [], topics)) return;
    this.own = { ...this.own, topics: topics.length > 0 ? [...topics] : undefined };
    this.publish([...this.own.memberships]);
  }

  /** Binds the ROUTER (port 0 picks a free port) and starts reading. */
  async bind(): Promise<void> {
    // Before the first connection can come: libzmq asks the ZAP handler about every one.
    this.unzap = await this.curve?.checkConnections();
    await this.address.bind(this.router);
    const watching = this.connections.watch(this.router, () => this.closed);
    this.loops.push(this.receiveLoop(), watching);
    this.liveness.start();
    this.config.events.emit({ type: 'listening', mesh: this.mesh, endpoint: this.endpoint });
  }

  /** Connects to every manual peer, from the same ROUTER. */
  connectPeers(): void {
    for (const peer of this.config.mesh.peers) {
      const link = this.table.addLink(peer.endpoint, peer.rid);
      this.sockets.connect(link);
    }
  }

  /** One full read of this mesh's MeshNode descriptors (automatic discovery). */
  setDiscovered(descriptors: readonly MeshNodeDescriptor[]): void {
    if (this.closed) return;
    this.curve?.listed(descriptors);
    this.discovered.set(descriptors);
  }

  /** Follows the owner lease: fenced refuses new business records and leaves selection; held undoes both. */
  setFenced(fenced: boolean): void {
    if (this.inbound.fenced === fenced || this.closed) return;
    this.inbound.fenced = fenced;
    this.publish(this.own.memberships.map((m) => ({ ...m, draining: this.drained || fenced })));
  }

  /** Runtime weight change of a Server membership: a larger revision reaches every ready peer. */
  setWeight(channel: string, weight: number): boolean {
    if (!this.own.memberships.some((m) => m.channel === channel)) return false;
    this.publish(this.own.memberships.map((m) => (m.channel === channel ? { ...m, weight } : m)));
    return true;
  }

  /**
   * Drains the node's Server memberships: peers stop selecting it for new channel calls, accepted
   * work finishes (up to the deadline), channel records arriving meanwhile end `Rejected`. The
   * ROUTER stays open: Node direct and this node's own calls go on.
   */
  async drain(deadlineMs: number): Promise<'completed' | 'deadline'> {
    if (this.drained || this.closed) return 'completed';
    this.drained = true;
    // A draining node takes no new objects either: peers stop placing (or moving) them here. It says
    // it drains, so that its peers take its going next as a graceful leave, not as a loss.
    this.own = { ...this.own, objectTypes: undefined, draining: true };
    this.publish(this.own.memberships.map((m) => ({ ...m, draining: true })));
    this.config.events.emit({ type: 'drain', mesh: this.mesh, phase: 'started' });
    const phase = await this.inbound.drain(deadlineMs, () => this.closed);
    this.config.events.emit({ type: 'drain', mesh: this.mesh, phase });
    return phase;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.liveness.stop();
    this.table.close();
    this.calls.close();
    this.pump.close();
    if (!this.router.closed) this.router.close();
    await Promise.all(this.loops);
    await this.unzap?.();
  }

  /**
   * A larger revision of the node's state reaches every ready peer. A node our hello reached but whose
   * welcome has not come is no peer yet: it gets this state when its welcome admits it (see
   * `PeerTable.onWelcome`).
   */
  private publish(memberships: MeshMembership[]): void {
    this.own = { ...this.own, memberships, revision: this.own.revision + 1 };
    const record = this.records.state();
    for (const peer of this.table.peers.values()) this.pump.force(record, peer.route.pipe);
    this.config.onStateChange?.(this.own);
  }

  private peerHost(): PeerHost {
    return {
      mesh: this.config.mesh.mesh,
      rid: this.config.rid,
      events: this.config.events,
      ownState: () => this.own,
      send: (pipe, record) => this.pump.force(record, pipe),
      routeGone: (route, reason) => {
        this.link?.routeGone(route, reason);
        this.pump.purgeDest(route.pipe);
        // Replies that arrived before the loss was reported are read first (see `afterQueuedReads`).
        void afterQueuedReads(this.reads, this.router, LOSS_READ_GRACE_MS).then(() =>
          this.config.pending.failRoute(
            route,
            (d) => new ZLinkError('RouteError', `${d}: peer '${route.peer.rid}': ${reason}`),
          ),
        );
      },
      reconnect: (link) => this.sockets.restart(link),
      disconnect: (link) => this.sockets.disconnect(link),
      changed: () => {
        this.candidates.rebuild(this.table.peers.values());
        this.calls.wake();
        this.link?.peersChanged();
      },
      protocolError: (reason, peerRid) => this.protocolError(reason, peerRid),
      accepts: (link, state) => this.discovered.accepts(link, state),
      hello: (link) => this.sayHello(link),
      helloRecord: (link) => this.records.hello(link.endpoint),
      stateRecord: () => this.records.state(),
      welcomeRecord: (rid) => this.records.welcome(rid),
      proofRefusal: (state) => this.identity.refusal(state),
      continues: (peer, state) => this.identity.continues(peer, state),
      claimRefused: (rid, detail) => this.identity.claimRefused(rid, detail),
    };
  }

  private callHost(): MeshCallHost {
    const { mesh, rid, pump, table } = this;
    const candidates = (channel: string) => this.candidates.get(channel);
    const isClosed = () => this.closed;
    return { mesh, rid, pump, isClosed, peers: table.peers, links: table.links, candidates };
  }

  private sayHello(link: OutboundLink): void {
    this.table.stopHello(link);
    if (this.closed || link.status !== 'handshaking') return;
    link.helloRevision ??= this.own.revision;
    this.pump.force(this.records.hello(link.endpoint), link.pipe);
    link.helloTimer = setTimeout(() => this.sayHello(link), HELLO_RETRY_MS);
  }

  private async receiveLoop(): Promise<void> {
    const { pending } = this.config;
    const { reads } = this;
    for (;;) {
      // This frame's replies go to zeromq before the next receive is asked for (see `writePending`).
      if (this.pump.writePending) await RESOLVED;
      reads.parked = true;
      let message: Buffer[];
      try {
        message = await this.router.receive();
      } catch {
        return; // closed
      }
      reads.parked = false;
      if (!hasFrames(message, 2, this.protocolError)) continue;
      reads.taken++;
      const id = message[0] as Buffer;
      const decoded = decodeFrame(message[1] as Buffer, this.link?.listening === true);
      const route = this.table.routeOf(id);
      const live = route !== undefined && this.table.peers.get(route.peer.rid) === route.peer;
      if (live) route.peer.lastHeard = Date.now();
      for (const bad of decoded.malformed) {
        if (bad.correlation !== undefined && live) this.inbound.decodeError(id, bad.correlation, bad.reason);
        else this.protocolError(bad.reason, route?.peer.rid);
      }
      // Indexed: an iterator kept across the await below would allocate a result object per record.
      const { records } = decoded;
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!;
        switch (record.kind) {
          case RecordKind.MeshHello:
          case RecordKind.MeshWelcome:
          case RecordKind.MeshState:
            this.table.onStateRecord(id, route, record);
            break;
          case RecordKind.MeshPing:
            break;
          case RecordKind.Reply:
          case RecordKind.ErrorReply:
            // Only a peer's connection (current or retiring) answers: a stranger's guessed correlation
            // must not end one of our requests.
            if (!route) this.protocolError('a reply from a connection that is no peer route');
            else if (!settleReply(pending, record)) this.unmatched(record.correlation, route);
            break;
          case RecordKind.MeshSend:
          case RecordKind.MeshRequest: {
            if (!live) {
              this.protocolError(`${record.packet}: from a node that is not a ready peer`, route?.peer.rid);
              break;
            }
            const stalled = this.inbound.deliver(id, record);
            if (stalled) await this.liveness.unread.during(stalled);
            break;
          }
          default:
            this.protocolError(`a MeshNode does not accept record kind ${record.kind}`, route?.peer.rid);
        }
      }
      // After the frame's handshake records: a hello batched before them may have made the sender a peer.
      if (decoded.objects) this.link?.receive(this.table.routeOf(id), decoded.objects);
    }
  }

  private unmatched(correlation: number, route: PeerRoute): void {
    const where = { mesh: this.mesh, sourceRid: route.peer.rid };
    dropUnmatchedReply(this.config.events, 'route-mesh', where, correlation);
  }

  private readonly protocolError = (reason: string, peerRid?: string): void => {
    this.config.events.emit({
      type: 'protocol_error',
      route: 'route-mesh',
      mesh: this.config.mesh.mesh,
      ...(peerRid !== undefined && { peerRid }),
      reason,
    });
  };
}
