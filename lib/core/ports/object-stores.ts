import type { ObjectKind } from '../kinds.js';

/**
 * The object-layer store ports (docs/architecture.md#stores-and-authority): the Authority Store, which says
 * who owns each Spot and Actor, and the Relocation Store, which keeps what a move leaves behind.
 * Implementations live in `lib/store` (Redis, memory); `lib/spot` sees only these interfaces.
 *
 * Both hold one record per object, (mesh, kind, id), and change it only by compare-and-swap on its
 * StoreVersion: two nodes racing to create, take over or release the same object cannot both win. A record
 * has no lease of its own and never expires: an owner's liveness is its node's owner lease
 * (docs/protocol.md#owner-lease-and-fencing), judged by whoever reads the record, never by the store deleting
 * it.
 */

/** The address of one object's record: unique per (mesh, kind, id); ids are the application's. */
export interface ObjectKey {
  readonly mesh: string;
  readonly kind: ObjectKind;
  readonly id: string;
}

/**
 * Assigned by the store on every write: larger for every later write to a record, and never given
 * again within one mesh of one store — not even after a delete, so a reader holding the version of
 * an old record never takes a re-created one for it (docs/protocol.md#the-route-cache: a larger StoreVersion
 * invalidates a cached route). Compare versions of one key only.
 */
export type StoreVersion = number;

/** A record as read from a store. Times are the store's own clock (Redis `TIME`), in ms since the epoch. */
export interface Versioned<R> {
  readonly key: ObjectKey;
  readonly record: R;
  readonly version: StoreVersion;
  /** When this version was written, by the store's clock. */
  readonly writtenAt: number;
  /** When it was read, by the same clock: what "now" is for a deadline derived from `writtenAt`. */
  readonly readAt: number;
}

/** What a compare-and-swap ended with: the new version, or the record that is there instead. */
export type CasResult<R> =
  | { readonly ok: true; readonly version: StoreVersion; readonly writtenAt: number }
  | { readonly ok: false; readonly current: Versioned<R> | undefined };

/** What a delete ended with: gone, or the record that is there instead (`undefined`: already absent). */
export type DeleteResult<R> =
  { readonly ok: true } | { readonly ok: false; readonly current: Versioned<R> | undefined };

/** The compare-and-swap surface both object stores share. */
export interface VersionedStore<R> {
  /**
   * The record of `key` with its version, `undefined` when there is none. Rejects with `ZLinkError`
   * `ProtocolError` when the stored record cannot be read (another version or a hand edit wrote it;
   * `details.version` lets an operator delete it), and with the store's own error when it cannot be
   * reached.
   */
  get(key: ObjectKey): Promise<Versioned<R> | undefined>;
  /**
   * Writes `next` for `key` atomically if and only if the stored version is `expected` (`'absent'`:
   * there is no record). On success the store assigns the new version. On a mismatch nothing is
   * written and `current` is what is there. Never retries, never merges. Rejects with
   * `InvalidArgument` (nothing written) when `key` or `next` is not one this store accepts.
   */
  compareAndSet(key: ObjectKey, expected: StoreVersion | 'absent', next: R): Promise<CasResult<R>>;
  /** Removes the record of `key` if and only if its version is `expected`; otherwise as `compareAndSet`. */
  delete(key: ObjectKey, expected: StoreVersion): Promise<DeleteResult<R>>;
  /** Lets go of this handle's connection; the records stay (they are the store's, not the handle's). */
  close(): Promise<void>;
}

/** `creating` while the owner builds it, `ready` while it takes messages, `releasing` while it goes. */
export type AuthorityState = 'creating' | 'ready' | 'releasing';

/** One run of one MeshNode: the owner an authority names. */
export interface NodeRun {
  readonly rid: string;
  /** The node's lifecycle generation (random per start; compared for equality only). */
  readonly nodeGeneration: string;
}

/** Who owns one object, its authority (docs/protocol.md#fences-and-owner-generations). */
export interface AuthorityRecord {
  /** The Spot or Actor type: which factory builds it. */
  readonly type: string;
  readonly state: AuthorityState;
  readonly owner: NodeRun;
  /** Grows with every incarnation under the same id (a create after a destroy, a takeover). */
  readonly objectGeneration: number;
  /** Grows with every change of owner within one incarnation (relocation). */
  readonly authorityOwnerGeneration: number;
  /** The owner's lease generation when it took the object: a fence for admission. */
  readonly ownerLeaseGeneration: number;
}

/**
 * What a takeover ended with: written (or deleted: no `version`), refused because the previous owner is
 * alive, or a version mismatch.
 */
export type TakeoverResult =
  | { readonly ok: true; readonly version: StoreVersion | undefined; readonly writtenAt: number }
  | { readonly ok: false; readonly ownerAlive: true }
  | {
      readonly ok: false;
      readonly ownerAlive?: undefined;
      readonly current: Versioned<AuthorityRecord> | undefined;
    };

export interface AuthorityStore extends VersionedStore<AuthorityRecord> {
  /**
   * Takes over the record of `key` at version `expected` from its owner `previous` — writes `next`, or
   * deletes it (`next` undefined) — atomically and only while `previous` holds no live lease in the
   * Location Store this store sits beside (its MeshNode descriptor of `key.mesh` absent or lapsed, judged
   * by the store's clock at the write). A reader's view of leases may be stale; this check is not, so a
   * live owner is never taken over. `ownerAlive` when it is still alive; a mismatch as `compareAndSet`.
   */
  takeOver(
    key: ObjectKey,
    expected: StoreVersion,
    next: AuthorityRecord | undefined,
    previous: NodeRun,
  ): Promise<TakeoverResult>;
  /**
   * Every authority of `mesh` whose owner is NodeRid `ownerRid` (any node generation), read at one
   * point in time; records that cannot be read are left out. For takeover after a lost node and
   * for a node's own cleanup at stop.
   */
  listByOwner(mesh: string, ownerRid: string): Promise<Versioned<AuthorityRecord>[]>;
}

/**
 * `preparing` from the start of a move until the target's owner CAS, then `committed` (the source
 * keeps a Message Follow route for `followMs`), or `aborted` (the object stayed on the source).
 */
export type RelocationState = 'preparing' | 'committed' | 'aborted';

/** One side of a move: the node run and the authority fences it holds the object under. */
export interface RelocationEnd extends NodeRun {
  readonly authorityOwnerGeneration: number;
  readonly ownerLeaseGeneration: number;
}

/**
 * The record of an object's latest move (docs/protocol.md#relocation-store: what remains after a
 * move). The moving state, queue and timers never pass through it: they go over the mesh.
 */
export interface RelocationRecord {
  /** Identifies one move: control records and Message Follow relays of another move are refused. */
  readonly relocationId: string;
  readonly type: string;
  readonly state: RelocationState;
  /**
   * The incarnation being moved: a move of an older one never applies to a newer one
   * (docs/protocol.md#where-objectgeneration-counts).
   */
  readonly objectGeneration: number;
  readonly source: RelocationEnd;
  readonly target: RelocationEnd;
  /** How long after the commit the source relays late messages (MessageFollowDuration; 0 = off). */
  readonly followMs: number;
}

export interface RelocationStore extends VersionedStore<RelocationRecord> {
  /**
   * Every relocation record of `mesh` whose source or target is NodeRid `rid`, read at one point in
   * time; records that cannot be read are left out. For a node that restarts or stops with moves
   * in flight.
   */
  listByNode(mesh: string, rid: string): Promise<Versioned<RelocationRecord>[]>;
}

/**
 * Until when the source of a committed move relays late messages, by the store's clock;
 * `undefined` when the move is not committed or Message Follow is off. Compare with `readAt`.
 */
export function followUntil(stored: Versioned<RelocationRecord>): number | undefined {
  const { state, followMs } = stored.record;
  return state === 'committed' && followMs > 0 ? stored.writtenAt + followMs : undefined;
}
