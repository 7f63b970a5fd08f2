import { ZLinkError } from '../../core/errors.js';
import {
  type MeshNodeState,
  type MulticastTopic,
  type ObjectWireRecord,
  RESERVED_KINDS,
} from '../../core/wire/index.js';
import type {
  InboundObjectRecord,
  MeshLink,
  MeshPeerEvent,
  ObjectPeer,
  PeerAddress,
} from '../../core/ports/index.js';
import type { SocketPump } from '../io/index.js';
import type { Peer, PeerRoute } from './peer-table.js';

/** What the link needs from its MeshNode. */
export interface ObjectLinkHost {
  readonly mesh: string;
  readonly self: PeerAddress;
  readonly pump: SocketPump;
  /** The node's ready peers, by NodeRid (the PeerTable's own map: read, never written). */
  readonly peers: ReadonlyMap<string, Peer>;
  isClosed(): boolean;
  protocolError(reason: string, peerRid?: string): void;
  /** Advertises this node's Logical Multicast pairs in its state (see `MeshLink.advertise`). */
  advertise(topics: readonly MulticastTopic[]): void;
}

/** A ready peer's state as the object layer sees it: hosted types only on an Object Server. */
export function objectPeer(state: MeshNodeState): ObjectPeer {
  const { rid, generation, objectRole } = state;
  const server = objectRole === 'server';
  const objectTypes = server ? (state.objectTypes ?? []) : [];
  const topics = server ? (state.topics ?? NO_TOPICS) : NO_TOPICS;
  return { rid, generation, objectRole, objectTypes, topics };
}

const NO_TOPICS: readonly MulticastTopic[] = Object.freeze([]);

const sameTypes = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((t, i) => t === b[i]);

/** Whether two advertised sets are the same, in the same order. */
export const sameTopics = (a: readonly MulticastTopic[], b: readonly MulticastTopic[]): boolean =>
  a.length === b.length && a.every((t, i) => t.channel === b[i]?.channel && t.topic === b[i]?.topic);

/**
 * The peer events that take `known` (what the listeners were last told) to `current` (the ready
 * peers now), and `known` updated to match. A NodeRid that changed generation is a `down` of the
 * old run before the `up` of the new one; a peer whose object role, types and topics are unchanged yields
 * nothing (a membership change is not the object layer's). `reasons` names why a run went down. Pure.
 */
export function peerEvents(
  known: Map<string, ObjectPeer>,
  current: Iterable<ObjectPeer>,
  reasons: ReadonlyMap<string, string>,
): MeshPeerEvent[] {
  const events: MeshPeerEvent[] = [];
  const seen = new Set<string>();
  const down = (old: ObjectPeer): void => {
    const reason = reasons.get(`${old.rid}\u0000${old.generation}`) ?? 'it is no longer a ready peer';
    events.push({ type: 'down', peer: { rid: old.rid, generation: old.generation }, reason });
    known.delete(old.rid);
  };
  for (const peer of current) {
    seen.add(peer.rid);
    let old = known.get(peer.rid);
    if (old && old.generation !== peer.generation) {
      down(old);
      old = undefined;
    }
    if (!old) events.push({ type: 'up', peer });
    else if (
      old.objectRole === peer.objectRole &&
      sameTypes(old.objectTypes, peer.objectTypes) &&
      sameTopics(old.topics, peer.topics)
    )
      continue;
    else events.push({ type: 'changed', peer });
    known.set(peer.rid, peer);
  }
  for (const old of [...known.values()]) if (!seen.has(old.rid)) down(old);
  return events;
}

/**
 * The `MeshLink` of one MeshNode (see the port in core/mesh-link.ts): object records go out through
 * the node's send pump to a ready peer's current route, and come in from the node's receive loop.
 * While no `onRecord` listener is registered the node does not ask its decoder for object records,
 * so they stay malformed records, dropped and counted as on a node without an object layer.
 */
export class MeshObjectLink implements MeshLink {
  readonly mesh: string;
  readonly self: PeerAddress;
  private readonly records = new Set<(record: InboundObjectRecord) => void>();
  private readonly peerListeners = new Set<(event: MeshPeerEvent) => void>();
  /** The ready peers as the listeners were last told them. */
  private readonly known = new Map<string, ObjectPeer>();
  /** Why a run (rid, generation) was lost, noted when its route goes, read by the next `peersChanged`. */
  private readonly lossReasons = new Map<string, string>();

  constructor(private readonly host: ObjectLinkHost) {
    this.mesh = host.mesh;
    this.self = host.self;
    for (const peer of host.peers.values()) this.known.set(peer.rid, objectPeer(peer.state));
  }

  /** Whether someone takes object records: the node's decoder reads them only then. */
  get listening(): boolean {
    return this.records.size > 0;
  }

  send(to: PeerAddress | string, record: Uint8Array): boolean {
    const { host } = this;
    const rid = typeof to === 'string' ? to : to.rid;
    if (host.isClosed()) throw new ZLinkError('Shutdown', `mesh '${host.mesh}': the MeshNode is closed`);
    if (rid === host.self.rid) {
      throw new ZLinkError('InvalidArgument', `mesh '${host.mesh}': '${rid}' is this node, not a peer`);
    }
    const peer = host.peers.get(rid);
    if (!peer) throw new ZLinkError('RouteError', `mesh '${host.mesh}': '${rid}' is not a ready peer`);
    if (typeof to !== 'string' && to.generation !== peer.state.generation) {
      throw new ZLinkError(
        'RouteError',
        `mesh '${host.mesh}': peer '${rid}' runs generation '${peer.state.generation}', not '${to.generation}'`,
      );
    }
    return host.pump.offer(record, peer.route.pipe);
  }

  sendToEach(to: readonly PeerAddress[], record: Uint8Array): number | false {
    const { host } = this;
    if (host.isClosed()) throw new ZLinkError('Shutdown', `mesh '${host.mesh}': the MeshNode is closed`);
    if (!host.pump.hasSpace) return false;
    let queued = 0;
    for (const address of to) {
      const peer = host.peers.get(address.rid);
      if (peer === undefined || peer.state.generation !== address.generation) continue;
      host.pump.force(record, peer.route.pipe);
      queued++;
    }
    return queued;
  }

  advertise(topics: readonly MulticastTopic[]): void {
    if (!this.host.isClosed()) this.host.advertise(topics);
  }

  answer(to: string, record: Uint8Array): boolean {
    const peer = this.host.isClosed() ? undefined : this.host.peers.get(to);
    if (!peer) return false;
    this.host.pump.force(record, peer.route.pipe);
    return true;
  }

  /** The node's send queue: it ends `Shutdown` once the node has closed (see `SocketPump.waitForSpace`). */
  waitForSpace(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.host.pump.waitForSpace(timeoutMs, signal);
  }

  onRecord(listener: (record: InboundObjectRecord) => void): () => void {
    this.records.add(listener);
    return () => this.records.delete(listener);
  }

  onPeer(listener: (event: MeshPeerEvent) => void): () => void {
    this.peerListeners.add(listener);
    return () => this.peerListeners.delete(listener);
  }

  isReady(rid: string, generation: string): boolean {
    return this.host.peers.get(rid)?.state.generation === generation;
  }

  peers(): readonly ObjectPeer[] {
    return [...this.host.peers.values()].map((p) => objectPeer(p.state));
  }

  objectServers(type?: string): readonly ObjectPeer[] {
    return this.peers().filter(
      (p) => p.objectRole === 'server' && (type === undefined || p.objectTypes.includes(type)),
    );
  }

  /**
   * @internal The node's receive loop: the object records of one frame from the pipe `route` names.
   * Only a ready peer's reach the listeners; anyone else's are dropped and counted.
   */
  receive(route: PeerRoute | undefined, objects: readonly ObjectWireRecord[]): void {
    if (!route || this.host.peers.get(route.peer.rid) !== route.peer) {
      for (const { kind } of objects) {
        const name = RESERVED_KINDS.get(kind) ?? String(kind);
        this.host.protocolError(`${name}: from a node that is not a ready peer`, route?.peer.rid);
      }
      return;
    }
    const from: PeerAddress = { rid: route.peer.rid, generation: route.peer.state.generation };
    for (const { kind, bytes } of objects) {
      const record: InboundObjectRecord = { kind, from, bytes };
      for (const listener of this.records) {
        try {
          listener(record);
        } catch {
          // The listener's failure is its own (the port's contract); the receive loop reads on.
        }
      }
    }
  }

  /** @internal A route of the node is gone: when it was a peer's current one, that run was lost. */
  routeGone(route: PeerRoute, reason: string): void {
    const { peer } = route;
    if (peer.route === route && this.host.peers.get(peer.rid) !== peer) {
      this.lossReasons.set(`${peer.rid}\u0000${peer.state.generation}`, reason);
    }
  }

  /** @internal The PeerTable admitted, lost or updated a peer: tells the listeners what changed. */
  peersChanged(): void {
    const current = [...this.host.peers.values()].map((p) => objectPeer(p.state));
    const events = peerEvents(this.known, current, this.lossReasons);
    this.lossReasons.clear();
    for (const event of events) {
      for (const listener of this.peerListeners) {
        try {
          listener(event);
        } catch {
          // As for records: a listener runs inside the PeerTable's transition and must not break it.
        }
      }
    }
  }
}
