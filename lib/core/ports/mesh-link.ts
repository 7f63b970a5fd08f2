import type { ObjectRole } from '../kinds.js';
import type { MulticastTopic } from '../wire/mesh-records.js';

/**
 * The MeshLink port (docs/architecture.md#layer-rules): how the object layer (`lib/spot`) reaches the one
 * RouteMesh its objects ride on without importing the transport. One link per MeshNode; `runtime` wires it.
 *
 * Every shape here is one a MeshNode already holds: a ready peer is a NodeRid with the lifecycle
 * generation, object role and (from the handshake) state it announced; records go out on the peer's
 * current route through the node's send queue. Only `PeerAddress`-pinned sends are new; hosted
 * object types come from the mesh state's optional trailing `objectTypes` field (`[]` when a peer
 * sent none, as every node of a version before the object layer does).
 */

/**
 * The record kind of an object message: one of the mesh record kinds reserved for the object layer
 * (`RESERVED_KINDS` in codec.ts: 42 sessionRelocationSeal, 43 its reply, 44 sessionRelocationRoute,
 * 50 messageFollow, 60–63 object send/request/reply/error reply, 64–65 control and stale, 66–70 a
 * move's records, 71–72 a draining owner's barrier). Never a channel record kind: an
 * old node must not hand an object payload to a channel handler.
 */
export type ObjectRecordKind = number;

/** One run of one MeshNode: its NodeRid and the lifecycle generation of that run (compared for equality). */
export interface PeerAddress {
  readonly rid: string;
  readonly generation: string;
}

/** A ready peer as the object layer sees it. */
export interface ObjectPeer extends PeerAddress {
  readonly objectRole: ObjectRole;
  /**
   * The object types the peer hosts (Spot and Actor types it has factories for), as it announced
   * them; empty unless `objectRole` is `'server'`. Placement picks among peers that host a type.
   */
  readonly objectTypes: readonly string[];
  /**
   * The Logical Multicast (channel, topic) pairs the peer's live Spots subscribe to, as it last
   * advertised them (`[]` when none): a publish sends it one record when it holds the event's pair.
   */
  readonly topics: readonly MulticastTopic[];
}

/** An object record a ready peer sent us; `bytes` is the whole record as it arrived (not copied). */
export interface InboundObjectRecord {
  readonly kind: ObjectRecordKind;
  readonly from: PeerAddress;
  readonly bytes: Uint8Array;
}

/**
 * A peer became ready (`up`), announced a new state within its generation (`changed`: object role
 * or hosted types), or was lost (`down`: silence, a new generation replacing it, a closed link). A
 * new generation of a NodeRid is always a `down` of the old one before the `up` of the new one.
 */
export type MeshPeerEvent =
  | { readonly type: 'up'; readonly peer: ObjectPeer }
  | { readonly type: 'changed'; readonly peer: ObjectPeer }
  | { readonly type: 'down'; readonly peer: PeerAddress; readonly reason: string };

export interface MeshLink {
  /** The MeshName this link belongs to. */
  readonly mesh: string;
  /** This node's own run: its NodeRid and lifecycle generation. */
  readonly self: PeerAddress;

  /**
   * Queues one encoded object record for the ready peer `to` (when `to.generation` is given, only
   * that run of it). Returns `true` once queued, `false` when the node's send queue is full (nothing
   * queued: wait with `waitForSpace` or refuse the call — the link never buffers beyond its queue).
   * Queued is not delivered: a peer lost afterwards loses what was queued for it, and no record is
   * ever retried on another peer. Throws `ZLinkError` at once, nothing queued: `RouteError` when `to`
   * is not a ready peer or is another generation, `InvalidArgument` when `to` is this node, `Shutdown`
   * when the node is closing.
   */
  send(to: PeerAddress | string, record: Uint8Array): boolean;
  /**
   * Queues the same `record` once for each ready peer of `to` (one record per node, the bytes shared).
   * Admitted as one send: `false`, nothing queued, when the node's send queue is full; once there is
   * room, the whole set is queued even past the bound (it exceeds it by `to.length - 1` records at
   * most). A peer of `to` that is no longer a ready peer (or runs another generation) is skipped.
   * Returns how many peers it was queued for, or `false`; throws `Shutdown` when the node is closing.
   */
  sendToEach(to: readonly PeerAddress[], record: Uint8Array): number | false;
  /**
   * Replaces the Logical Multicast pairs this node advertises (see `ObjectPeer.topics`): every ready
   * peer gets the node's state with a larger revision, behind everything already queued for it, and
   * applies it on arrival. Order within `topics` is kept; an unchanged set sends nothing.
   */
  advertise(topics: readonly MulticastTopic[]): void;
  /**
   * Queues an answer (a reply, an error reply, a stale-route notice) for the ready peer `to`, past the
   * send queue's bound: an answer is never refused for space, as replies on every other path. Returns
   * `false`, nothing queued, when `to` is not a ready peer (its caller is gone; the answer is dropped).
   */
  answer(to: string, record: Uint8Array): boolean;
  /**
   * Resolves when `send` may queue again; ends `Timeout` after `timeoutMs`, `Cancelled` on abort,
   * `Shutdown` when the node closes.
   */
  waitForSpace(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `listener` for every object record a ready peer sends, in the order they arrived from that
   * peer, on the node's receive turn (a listener must not block; a throw is its own and is dropped).
   * Records from a node that is not a ready peer never reach it. Returns the unsubscribe function.
   */
  onRecord(listener: (record: InboundObjectRecord) => void): () => void;
  /** Calls `listener` on every peer change (see `MeshPeerEvent`); returns the unsubscribe function. */
  onPeer(listener: (event: MeshPeerEvent) => void): () => void;
  /**
   * Whether node run (`rid`, `generation`) is a ready peer now (one map read: for a call's path, where
   * `peers()` would copy).
   */
  isReady(rid: string, generation: string): boolean;
  /** The ready peers right now (a snapshot: the next `onPeer` event may change it). */
  peers(): readonly ObjectPeer[];
  /** The ready peers whose `objectRole` is `'server'`, only those hosting `type` when given. */
  objectServers(type?: string): readonly ObjectPeer[];
}
