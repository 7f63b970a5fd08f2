import type { MeshNodeState, MeshStateRecord } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { OutboundLink } from './outbound-link.js';

/** One way to reach a peer: the pipe we send to. Pending requests are tied to the route they left on. */
export interface PeerRoute {
  readonly peer: Peer;
  readonly pipe: Buffer;
  readonly key: string;
  readonly link: OutboundLink | undefined;
}

/** A ready peer: one per NodeRid and lifecycle generation. */
export interface Peer {
  readonly rid: string;
  readonly id: Buffer;
  /**
   * The proof field of the record that admitted it: in plain ZMTP the run's token (see `PeerHost.continues`).
   */
  readonly proof: Uint8Array | undefined;
  state: MeshNodeState;
  route: PeerRoute;
  lastHeard: number;
}

/** What the table needs from its MeshNode. */
export interface PeerHost {
  readonly mesh: string;
  readonly rid: string;
  readonly events: ZLinkEvents;
  ownState(): MeshNodeState;
  /** Queues a control record toward a pipe. */
  send(pipe: Buffer, record: Uint8Array): void;
  /** A route is gone: drop what is queued for it and end the requests it carried (`RouteError`). */
  routeGone(route: PeerRoute, reason: string): void;
  /** Restarts an outbound link from scratch (a fresh connection, a fresh handshake). */
  reconnect(link: OutboundLink): void;
  disconnect(link: OutboundLink): void;
  /** Peer set or memberships changed: rebuild candidates. */
  changed(): void;
  /** Whether the node that answered on `link` may be admitted (a discovered link: only a listed one). */
  accepts(link: OutboundLink, state: MeshNodeState): boolean;
  /** Starts (or repeats) the handshake on a connected link. */
  hello(link: OutboundLink): void;
  /** One hello record for `link` (with CURVE, proven to the key it connected to). */
  helloRecord(link: OutboundLink): Uint8Array;
  /** The state record of this node now (what `publish` sends its peers). */
  stateRecord(): Uint8Array;
  /** The welcome record for the node that said hello as `rid` (with CURVE, proven to its key). */
  welcomeRecord(rid: string): Uint8Array;
  /**
   * With CURVE: why a hello or welcome is not taken — its sender did not prove its NodeRid's key
   * (`lasting`), or no key is known for that NodeRid yet (the store has not listed it here yet).
   */
  proofRefusal(state: MeshStateRecord): { readonly why: string; readonly lasting: boolean } | undefined;
  /**
   * Whether a hello or welcome of `peer`'s run (same NodeRid and generation) that came on another
   * connection proves it is that run: with CURVE its proof did already (`proofRefusal`); in plain ZMTP
   * it must carry the run token the peer's first proof field carried.
   */
  continues(peer: Peer, state: MeshStateRecord): boolean;
  /** A connection claimed a NodeRid's run it is not (`security_refused`, reason `ridInUse`). */
  claimRefused(rid: string, detail: string): void;
  protocolError(reason: string, peerRid?: string): void;
}
