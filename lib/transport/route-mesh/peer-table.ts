import { Buffer } from 'node:buffer';
import { type MeshNodeState, type MeshStateRecord, RecordKind } from '../../core/wire/index.js';
import { OutboundLink, awaitsWelcome } from './outbound-link.js';
import type { Peer, PeerHost, PeerRoute } from './peer-host.js';
import { PipeRoutes, pipeKey } from './pipe-routes.js';
import { clientPair, objectClientsRule } from './object-client-rule.js';
import { initiatorWins } from './tie-break.js';
import { RETIRE_GRACE_MS } from '../timing.js';

export { OutboundLink };
export type { Peer, PeerHost, PeerRoute };

/** Superseded runs remembered per MeshNode; the oldest is forgotten first. */
const MAX_SUPERSEDED = 1024;
const runKey = (s: MeshNodeState): string => `${s.rid}\u0000${s.generation}`;

/**
 * The peers of one MeshNode and the handshake rules that admit them.
 *
 * - A peer is ready only after the handshake on the real connection named its NodeRid, lifecycle
 *   generation, object role and Server memberships; a new generation replaces the old peer (its
 *   requests end `RouteError`) and is admitted only by a fresh handshake.
 * - One logical link per pair: when both nodes connected to each other, the link initiated by the
 *   byte-wise smaller NodeRid is kept (`initiatorWins`); the other is retired after `RETIRE_GRACE_MS`.
 * - A generation another one of its NodeRid replaced is not admitted again while that one is a peer
 *   (generations are not ordered: the one that came later wins), even if its process lives, and even
 *   if it was lost for silence before the later one came.
 * - A link that answers with another MeshName, another NodeRid than configured, our own NodeRid, or as
 *   the other half of an Object Client pair without memberships (`clientPair`) is refused for good.
 */
export class PeerTable {
  readonly peers = new Map<string, Peer>();
  readonly links = new Map<string, OutboundLink>();
  /** Every pipe a peer may speak on: current routes and retiring ones. */
  private readonly routes = new PipeRoutes();
  private readonly retiring = new Set<NodeJS.Timeout>();
  /** Runs a later run of their NodeRid replaced, while that one is a peer (run key → NodeRid). */
  private readonly superseded = new Map<string, string>();
  /** The run last lost per NodeRid that no later run replaced yet (NodeRid → run key). */
  private readonly lastLost = new Map<string, string>();
  /** Connect attempts per endpoint, kept past a removed link: a pipe name is never reused. */
  private readonly attempts = new Map<string, number>();
  private readonly ownId: Buffer;

  constructor(private readonly host: PeerHost) {
    this.ownId = Buffer.from(host.rid, 'utf8');
  }

  routeOf(pipe: Buffer): PeerRoute | undefined {
    return this.routes.of(pipe);
  }

  /** The link whose current attempt `pipe` names; a pipe of an earlier attempt is no link's. */
  linkOf(pipe: Buffer): OutboundLink | undefined {
    const match = /^ep:\d+\.[\w-]+:(.*)$/s.exec(pipe.toString('utf8'));
    const link = match ? this.links.get(match[1] as string) : undefined;
    return link?.pipe.equals(pipe) ? link : undefined;
  }

  addLink(endpoint: string, expectedRid: string | undefined, discovered = false): OutboundLink {
    const link = new OutboundLink(endpoint, expectedRid, discovered, this.attempts.get(endpoint) ?? 0);
    this.links.set(endpoint, link);
    return link;
  }

  /** A hello, welcome or state record from pipe `pipe` (`route`: the peer route it names, if any). */
  onStateRecord(pipe: Buffer, route: PeerRoute | undefined, record: MeshStateRecord): void {
    if (record.kind === RecordKind.MeshHello) return this.onHello(pipe, route, record);
    if (record.kind === RecordKind.MeshWelcome) {
      const link = this.linkOf(pipe);
      if (link) return this.onWelcome(link, record);
      return this.host.protocolError('welcome on a pipe that is not one of our links', record.rid);
    }
    if (route) return this.onState(route, record);
    this.host.protocolError('state record from a node that is not a peer', record.rid);
  }

  /**
   * Acceptor side: a hello on an inbound connection (`route`: the peer route that connection already
   * carries, if any). Its routing id says nothing: the connection becomes the route of the NodeRid it
   * names only through the rules below.
   */
  onHello(pipe: Buffer, route: PeerRoute | undefined, hello: MeshStateRecord): void {
    const { host } = this;
    // One connection speaks for one run for its life: it claims no other NodeRid or generation later.
    if (route && (route.peer.rid !== hello.rid || route.peer.state.generation !== hello.generation)) {
      const was = `'${route.peer.rid}' (generation '${route.peer.state.generation}')`;
      host.claimRefused(hello.rid, `a connection that is NodeRid ${was} said hello as another run`);
      return;
    }
    // A node that did not prove its NodeRid's key gets no answer: the hello of one whose key is not
    // listed here yet is repeated until it is.
    const unproven = host.proofRefusal(hello);
    if (unproven) {
      if (unproven.lasting) host.protocolError(`hello refused: ${unproven.why}`, hello.rid);
      return;
    }
    const existing = this.peers.get(hello.rid);
    const key = pipeKey(pipe);
    const sameRun = existing !== undefined && existing.state.generation === hello.generation;
    // A live peer's run moves to another connection only on a hello that proves it is that run: a
    // second connection that merely names it gets nothing, not even a welcome.
    if (sameRun && existing.route.key !== key && !host.continues(existing, hello)) {
      host.claimRefused(
        hello.rid,
        `a second connection said hello as the run of connected NodeRid '${hello.rid}'`,
      );
      return;
    }
    // A run a later one replaced gets no welcome either: it would take us for its peer and send into nothing.
    if (this.superseded.has(runKey(hello))) {
      host.protocolError(
        `hello from generation '${hello.generation}', which a later one replaced`,
        hello.rid,
      );
      return;
    }
    // Answer even a hello we will not admit: the initiator checks the welcome and closes its link.
    host.send(pipe, host.welcomeRecord(hello.rid));
    const refusal = this.refusal(hello, undefined);
    if (refusal) {
      // Two Object Clients are a configuration matter, not a broken record: said as a refused peer.
      if (clientPair(this.host.ownState(), hello))
        host.events.emit({ type: 'peer_refused', mesh: host.mesh, rid: hello.rid, reason: refusal });
      else host.protocolError(`hello refused: ${refusal}`, hello.rid);
      return;
    }
    if (sameRun) {
      if (existing.route.key === key) {
        this.applyState(existing, hello); // a repeated hello: the welcome may have crossed it
        return;
      }
      const next: PeerRoute = { peer: existing, pipe: Buffer.from(pipe), key, link: undefined };
      // The peer connected again (its own link restarted, so the connection it had is gone): the
      // new one is the route.
      if (!existing.route.link) return this.switchRoute(existing, next);
      // Both nodes connected to each other: keep the link the smaller NodeRid initiated (here, the peer's).
      if (initiatorWins(existing.id, this.ownId)) this.switchRoute(existing, next);
      else {
        this.retire(next);
        // Ours is kept. The larger NodeRid connects to us while we are not its peer: at startup, or
        // after it lost us (it judged us silent) while we still hold our link ready. It drops what we
        // send on a link it does not know, so say hello on ours again: it takes our link up and
        // retires its own, as when both nodes start at once.
        host.send(existing.route.pipe, host.helloRecord(existing.route.link));
      }
      return;
    }
    if (existing) this.supersede(existing);
    this.admit(hello, pipe, undefined);
  }

  /** Initiator side: the welcome on one of our outbound links. */
  onWelcome(link: OutboundLink, welcome: MeshStateRecord): void {
    const { host } = this;
    if (link.status === 'ready' || link.status === 'retired') {
      const peer = this.peers.get(welcome.rid);
      if (peer && peer.state.generation === welcome.generation) this.applyState(peer, welcome);
      return;
    }
    if (!awaitsWelcome(link.status)) return;
    const unproven = host.proofRefusal(welcome);
    const refusal = this.refusal(welcome, link) ?? (unproven?.lasting ? unproven.why : undefined);
    if (refusal) {
      link.refuse(welcome.rid, refusal);
      host.disconnect(link);
      host.events.emit({
        type: 'peer_refused',
        mesh: host.mesh,
        endpoint: link.endpoint,
        rid: welcome.rid,
        reason: refusal,
        ...(link.discovered && { discovered: true }),
      });
      return;
    }
    // Not listed here yet (its key unknown, or a discovered link's node not listed): asked again later.
    if (unproven || this.superseded.has(runKey(welcome)) || !host.accepts(link, welcome)) {
      link.move('unlisted');
      return;
    }
    const existing = this.peers.get(welcome.rid);
    const sameRun = existing !== undefined && existing.state.generation === welcome.generation;
    // The node that answered names a connected peer's run without proving it is that run: not it.
    if (sameRun && !host.continues(existing, welcome)) {
      link.move('refuse');
      host.disconnect(link);
      host.claimRefused(
        welcome.rid,
        `the node at ${link.endpoint} answered as the run of connected NodeRid '${welcome.rid}'`,
      );
      return;
    }
    const told = link.helloRevision;
    link.admit(welcome.rid);
    if (sameRun) {
      const route: PeerRoute = { peer: existing, pipe: link.pipe, key: pipeKey(link.pipe), link };
      // The peer connected to us too: keep the link the smaller NodeRid initiated.
      if (initiatorWins(this.ownId, existing.id)) this.switchRoute(existing, route);
      else this.retire(route);
      return;
    }
    if (existing) this.supersede(existing);
    this.admit(welcome, link.pipe, link);
    // The race: the node that answered holds the state our hello carried, and what we published
    // between that hello and this welcome went to our peers of then, which it was not. A drain begun
    // in that gap (a node stopped just after it started) would never reach it, and our going would
    // read there as a loss, not a graceful leave: it gets our state now, after its welcome.
    if (told !== undefined && host.ownState().revision > told) host.send(link.pipe, host.stateRecord());
  }

  /** A membership change from a ready peer: only a larger revision of the same generation applies. */
  onState(route: PeerRoute, record: MeshStateRecord): void {
    const peer = route.peer;
    if (this.peers.get(peer.rid) !== peer || record.rid !== peer.rid) {
      this.host.protocolError('state record from a route that is not its peer', peer.rid);
      return;
    }
    if (record.generation !== peer.state.generation) return;
    this.applyState(peer, record);
  }

  /** Takes a peer out: its routes go, its requests end `RouteError`, our link to it starts over. */
  lose(peer: Peer, reason: string): void {
    if (this.peers.get(peer.rid) !== peer) return;
    this.peers.delete(peer.rid);
    // No run of this NodeRid is current now: a superseded one may come back.
    for (const [key, rid] of this.superseded) if (rid === peer.rid) this.superseded.delete(key);
    remember(this.lastLost, peer.rid, runKey(peer.state));
    const route = peer.route;
    if (this.routes.get(route.key) === route) this.routes.delete(route.key);
    this.host.routeGone(route, reason);
    for (const link of this.links.values()) {
      // A link we retired in favour of the peer's own comes back: the peer may not connect again.
      if (link.peerRid === peer.rid && (link === route.link || link.status === 'retired')) {
        link.move('restart');
        this.host.reconnect(link);
      }
    }
    this.host.changed();
    this.announce('peer_lost', peer, reason);
  }

  /** A pipe zeromq no longer routes to: its peer (or a retiring route) is gone. */
  unreachable(dest: Buffer): void {
    const route = this.routeOf(dest);
    if (!route) return;
    const peer = route.peer;
    if (peer.route === route && this.peers.get(peer.rid) === peer) this.lose(peer, 'its connection is gone');
  }

  /** An outbound link's connection is up (zeromq reports it by endpoint): a connecting link says hello. */
  linkUp(link: OutboundLink): void {
    link.connected = true;
    if (link.move('connected')) this.host.hello(link);
  }

  /** An outbound link lost its connection (zeromq reports it by endpoint). */
  linkDown(link: OutboundLink): void {
    link.connected = false;
    for (const peer of this.peers.values()) {
      if (peer.route.link === link) {
        this.lose(peer, `connection to ${link.endpoint} was lost`);
        return;
      }
    }
    link.move('dropped');
  }

  /** The listed identities changed: an unconfirmed link asks again (its answer may be listed now). */
  reconfirm(link: OutboundLink): void {
    if (link.connected && link.move('reconfirm')) this.host.hello(link);
  }

  /** A discovered link whose descriptor is gone: it closes, and a peer it carried is lost. */
  removeLink(link: OutboundLink, reason: string): void {
    if (this.links.get(link.endpoint) === link) this.links.delete(link.endpoint);
    for (const peer of this.peers.values()) if (peer.route.link === link) this.lose(peer, reason);
    link.move('refuse');
    this.host.disconnect(link);
    if (this.attempts.size >= MAX_SUPERSEDED * 16) this.attempts.clear();
    this.attempts.set(link.endpoint, link.attempt);
  }

  stopHello(link: OutboundLink): void {
    link.stopHello();
  }

  close(): void {
    for (const link of this.links.values()) link.stopHello();
    for (const timer of this.retiring) clearTimeout(timer);
    this.retiring.clear();
  }

  private refusal(state: MeshStateRecord, link: OutboundLink | undefined): string | undefined {
    const own = this.host.ownState();
    if (state.mesh !== own.mesh) return `the node serves MeshName '${state.mesh}', not '${own.mesh}'`;
    if (state.rid === own.rid) return 'the node is this node (a MeshNode is not its own peer)';
    if (link?.expectedRid !== undefined && state.rid !== link.expectedRid) {
      return `expected NodeRid '${link.expectedRid}' at ${link.endpoint}, found '${state.rid}'`;
    }
    if (clientPair(own, state)) return objectClientsRule(state.rid);
    return undefined;
  }

  /** A new generation of the peer's NodeRid is admitted: the old one is lost (`admit` marks it replaced). */
  private supersede(old: Peer): void {
    this.lose(old, 'it restarted with a new lifecycle generation');
  }

  private admit(record: MeshStateRecord, pipe: Buffer, link: OutboundLink | undefined): void {
    const { rid, proof } = record;
    // The run of this NodeRid lost last is replaced now, whether this run took it over or we had
    // judged it silent first: a paused process loses its peers before its restarted copy (slow to
    // start on a loaded machine) says hello, and when it wakes its hello must not take over again.
    const last = this.lastLost.get(rid);
    this.lastLost.delete(rid);
    if (last !== undefined && last !== runKey(record)) remember(this.superseded, last, rid);
    const peer = {
      rid,
      id: Buffer.from(rid, 'utf8'),
      proof,
      state: record,
      lastHeard: Date.now(),
    } as unknown as Peer;
    const key = pipeKey(pipe);
    peer.route = { peer, pipe: Buffer.from(pipe), key, link };
    this.peers.set(peer.rid, peer);
    this.routes.set(key, peer.route);
    this.host.changed();
    this.announce('peer_ready', peer);
  }

  private switchRoute(peer: Peer, route: PeerRoute): void {
    const old = peer.route;
    peer.route = route;
    this.routes.set(route.key, route);
    this.retire(old);
  }

  /** Keeps a superseded route readable for the grace period, then ends what it still carries. */
  private retire(route: PeerRoute): void {
    this.routes.set(route.key, route);
    route.link?.move('retire');
    const timer = setTimeout(() => {
      this.retiring.delete(timer);
      if (route.peer.route === route) return; // it became the current route again
      if (this.routes.get(route.key) === route) this.routes.delete(route.key);
      this.host.routeGone(route, 'the parallel link to the same peer was retired');
      if (route.link && route.link.status === 'retired') this.host.disconnect(route.link);
    }, RETIRE_GRACE_MS);
    this.retiring.add(timer);
  }

  private applyState(peer: Peer, state: MeshNodeState): void {
    if (state.revision <= peer.state.revision) return;
    peer.state = state;
    this.host.changed();
    this.announce('peer_state', peer);
  }

  /** Called after the candidates were rebuilt: whoever hears it sees the state it announces. */
  private announce(type: 'peer_ready' | 'peer_lost' | 'peer_state', peer: Peer, reason?: string): void {
    const { generation, memberships, draining } = peer.state;
    this.host.events.emit({
      type,
      mesh: this.host.mesh,
      rid: peer.rid,
      generation,
      memberships,
      ...(reason !== undefined && { reason }),
      ...(draining === true && { draining }),
    });
  }
}

/** Sets `key` to `value`, last in order; the oldest entry goes when the map is full. */
function remember(map: Map<string, string>, key: string, value: string): void {
  map.delete(key);
  if (map.size >= MAX_SUPERSEDED) map.delete(map.keys().next().value as string);
  map.set(key, value);
}
