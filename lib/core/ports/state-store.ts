import type { ZLinkError } from '../errors.js';
import type { NodeRun, ObjectKey } from './object-stores.js';

/**
 * The State Store port (docs/decisions.md#durable-state): where a persistent Spot or Actor keeps the value
 * its `capture()` returned, so that it comes back through `restore()` wherever the object is activated
 * again. Implementations live in `lib/store` (memory today); `lib/spot` sees only this interface.
 *
 * One row per object, (mesh, kind, id), holding the state owner epoch, the state version, the saved bytes
 * and the ObjectGeneration of the last adopter. Two compare-and-sets, each atomic per row:
 *
 * - **adopt**, the read every restore is: bumps the epoch (creating a fence row, epoch 1 and version 0 with
 *   no state, when there is none) and returns what is saved;
 * - **write**: applies if and only if the row's epoch is the writer's and its version the one the write
 *   replaces, and then sets `version := expected + 1`.
 *
 * So an owner replaced by an adopt can never overwrite what the new owner read or wrote: each of its
 * writes, even one already on its way, carries the old epoch and is refused `fenced`. The epoch is the
 * store's own, never the Location Store's generations, so an emptied Location Store cannot make every
 * later adopt look stale. A destroy writes a tombstone (no state; epoch and version kept) so an epoch is
 * never given twice under a key until the tombstone expires (`STATE_TOMBSTONE_TTL_MS`).
 *
 * Calls are batched: one `adopt` or `write` carries up to `batchLimit` rows, each with its own result, in
 * the batch's order. A per-row result means the store answered for that row; a rejected promise means it
 * did not answer (or the batch was refused, `InvalidArgument`, with nothing done), and each row's outcome
 * is unknown.
 */

/** How long a tombstone stays before a store may remove it: one day (docs/decisions.md#durable-state). */
export const STATE_TOMBSTONE_TTL_MS = 86_400_000;

/** What an adopt read: the row as it is after the adopt's epoch bump. */
export interface SavedState {
  /** The Spot or Actor type of the last write, or of the adopt that created the row. */
  readonly type: string;
  /** The state owner epoch, this adopt's: every write until the next adopt must carry it. */
  readonly epoch: number;
  /** The version of the last write (0: never written); a write replacing it names it as `expected`. */
  readonly version: number;
  /** The class's schema version the state was written under (0: never written). */
  readonly schemaVersion: number;
  /** The saved bytes (msgpack); `undefined` for a fence row (never written) or a tombstone. */
  readonly state: Uint8Array | undefined;
  /** The durable timers saved with the state (msgpack), `undefined` when none were. */
  readonly timers: Uint8Array | undefined;
  /** When the row was last written (or created), by the store's clock, in ms since the epoch. */
  readonly savedAt: number;
}

/** One row of an adopt: made by whoever just claimed the object's authority. */
export interface StateAdoptRequest {
  readonly key: ObjectKey;
  /** The type being activated: the type of a row this adopt creates. */
  readonly type: string;
  /** The claim's ObjectGeneration: an adopt by an older one than the row's last adopter is refused. */
  readonly objectGeneration: number;
  /** The claimer, kept in the row for an operator reading it. */
  readonly owner: NodeRun;
  /**
   * Adopt even when the row's last adopter has a larger ObjectGeneration: the Location Store's counter
   * went backwards (its Redis was emptied), and the claimer's own authority read still shows its claim.
   */
  readonly force?: true;
}

/** A row the store holds but cannot read (another version or a hand edit wrote it): never "absent". */
export interface UnreadableState {
  readonly ok: false;
  readonly reason: 'unreadable';
  /** `ProtocolError` naming the store and the key. */
  readonly error: ZLinkError;
}

export type StateAdoptResult =
  | { readonly ok: true; readonly saved: SavedState }
  /** The row's last adopter holds a larger ObjectGeneration: a newer claim overtook this one. */
  | { readonly ok: false; readonly reason: 'newerOwner'; readonly objectGeneration: number }
  | UnreadableState;

/** One row of a write: the state of one object, fenced by the epoch and the version it replaces. */
export interface StateWrite {
  readonly key: ObjectKey;
  /** The object's type, recorded with the state (a fence row or tombstone of another type takes it). */
  readonly type: string;
  /** The epoch of the writer's adopt, or the one a move handed over. */
  readonly epoch: number;
  /** The version this write replaces; it applies only while the row still holds it. */
  readonly expected: number;
  /** The class's schema version of `state`, at least 1. */
  readonly schemaVersion: number;
  /** The bytes to save (msgpack, never empty); `undefined` only with `tombstone`. */
  readonly state: Uint8Array | undefined;
  /** Durable timers (msgpack, never empty), `undefined` when there are none. */
  readonly timers: Uint8Array | undefined;
  /** Who writes, kept in the row for an operator (never compared: the epoch is the fence). */
  readonly authority: {
    readonly objectGeneration: number;
    readonly authorityOwnerGeneration: number;
    readonly rid: string;
  };
  /** The object was destroyed: the row keeps its epoch and version, without state, until it expires. */
  readonly tombstone?: true;
}

export type StateWriteResult =
  /** Written: `version` is `expected + 1`. */
  | { readonly ok: true; readonly version: number }
  /** Another owner adopted since: the row's epoch is `epoch`. Nothing written. */
  | { readonly ok: false; readonly reason: 'fenced'; readonly epoch: number }
  /** Same epoch, another version: only this epoch's own earlier write can have moved it. Nothing written. */
  | { readonly ok: false; readonly reason: 'version'; readonly version: number }
  /** No row (only an adopt creates one; an expired tombstone is gone). Nothing written. */
  | { readonly ok: false; readonly reason: 'absent' }
  | UnreadableState;

export interface StateStore {
  /** Names the store in every message and event: `State Store 'players' (PostgreSQL db/table)`. */
  readonly name: string;
  /** The most rows one `adopt` or `write` may carry. */
  readonly batchLimit: number;
  /** How many `adopt`/`write` calls are worth having in flight at once (a pool's connections). */
  readonly concurrency: number;
  /**
   * Makes the store ready (connects, creates or checks what it keeps rows in). Resolves once `adopt` and
   * `write` can be called; calling it again is harmless. Rejects with a `ZLinkError` whose message names
   * the store: `Configuration` when what it found cannot hold rows, `Unavailable` when it cannot be reached.
   */
  start(): Promise<void>;
  /**
   * Adopts each row of `batch`, atomically per row: when the row's last adopter has no larger
   * ObjectGeneration (or with `force`), bumps the epoch, records the claimer and its ObjectGeneration,
   * makes a tombstone live again, and answers the row as it now is; an absent row (or an expired
   * tombstone) is created as a fence row, epoch 1, version 0, no state. Never changes the state, the
   * version or the type of a row that exists. One result per request, in order. Rejects with
   * `InvalidArgument`, nothing done, when the batch is larger than `batchLimit`, names a key twice or
   * holds a request this store cannot take; otherwise a rejection means the store did not answer.
   */
  adopt(batch: readonly StateAdoptRequest[]): Promise<StateAdoptResult[]>;
  /**
   * Writes each row of `batch`, atomically per row, if and only if the row's epoch is the write's and its
   * version is `expected`; never creates a row, never merges, never retries. A tombstone write leaves no
   * state and marks the row for removal after the store's tombstone time; any other write makes it a live
   * row again. One result per write, in order; rejections as `adopt`.
   */
  write(batch: readonly StateWrite[]): Promise<StateWriteResult[]>;
  /** Lets go of this handle's connections; the rows stay (they are the store's, not the handle's). */
  close(): Promise<void>;
}
