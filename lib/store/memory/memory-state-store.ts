import { ZLinkError } from '../../core/errors.js';
import {
  STATE_TOMBSTONE_TTL_MS,
  type ObjectKey,
  type SavedState,
  type StateAdoptRequest,
  type StateAdoptResult,
  type StateStore,
  type StateWrite,
  type StateWriteResult,
  checkAdoptBatch,
  checkWriteBatch,
} from '../../core/ports/index.js';

export interface MemoryStateStoreOptions {
  /**
   * Names the store in messages: `State Store '<name>' (memory)`.
   * @default 'memory'
   */
  readonly name?: string;
  /**
   * How long a destroyed object's tombstone stays, in ms (an integer >= 1).
   * @default 86400000 (one day)
   */
  readonly tombstoneTtlMs?: number;
}

interface Row {
  type: string;
  epoch: number;
  version: number;
  schemaVersion: number;
  state: Uint8Array | undefined;
  timers: Uint8Array | undefined;
  /** The ObjectGeneration of the last adopter: the adopt guard. */
  objectGeneration: number;
  authorityOwnerGeneration: number;
  ownerRid: string;
  savedAt: number;
  /** When a tombstone was written; `undefined` for a live row. */
  destroyedAt: number | undefined;
}

const copy = (bytes: Uint8Array | undefined): Uint8Array | undefined =>
  bytes === undefined ? undefined : Uint8Array.from(bytes);

/**
 * A State Store inside one process, for single-process use and tests; by explicit opt-in only
 * (`stateStores: { name: { instance: new MemoryStateStore() } }`). The same compare-and-sets as the
 * Redis and PostgreSQL providers — no blind write, ever: an adopt bumps the epoch, a write applies only
 * at the row's epoch and version — so a test on it proves what the real providers do. Each batch runs
 * within one synchronous turn; bytes are copied in and out, so a caller's buffer never aliases a row.
 * The rows outlive `close()`: a runtime started later with the same instance restores from them.
 */
export class MemoryStateStore implements StateStore {
  readonly name: string;
  readonly batchLimit = 1024;
  readonly concurrency = 1;
  private readonly tombstoneTtlMs: number;
  private readonly rows = new Map<string, Row>();

  /** Throws `Configuration` naming the option when `options` holds a value it cannot take. */
  constructor(options: MemoryStateStoreOptions = {}) {
    const { name = 'memory', tombstoneTtlMs = STATE_TOMBSTONE_TTL_MS } = options;
    if (typeof name !== 'string' || name.length === 0)
      throw new ZLinkError('Configuration', 'MemoryStateStore options.name must be a non-empty string');
    if (!Number.isSafeInteger(tombstoneTtlMs) || tombstoneTtlMs < 1)
      throw new ZLinkError(
        'Configuration',
        'MemoryStateStore options.tombstoneTtlMs must be an integer >= 1',
      );
    this.name = `State Store '${name}' (memory)`;
    this.tombstoneTtlMs = tombstoneTtlMs;
  }

  /** In-process: nothing to connect or create. */
  start(): Promise<void> {
    return Promise.resolve();
  }

  adopt(batch: readonly StateAdoptRequest[]): Promise<StateAdoptResult[]> {
    return this.run(checkAdoptBatch, batch, (r, now) => this.adoptOne(r, now));
  }

  write(batch: readonly StateWrite[]): Promise<StateWriteResult[]> {
    return this.run(checkWriteBatch, batch, (w, now) => this.writeOne(w, now));
  }

  /** The rows stay, as a database's outlive a connection. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Checks `batch` whole, then answers each row in order, all at one reading of the clock. */
  private run<R, T>(
    check: (store: StateStore, batch: readonly R[]) => void,
    batch: readonly R[],
    one: (row: R, now: number) => T,
  ): Promise<T[]> {
    try {
      check(this, batch);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const now = Date.now();
    return Promise.resolve(batch.map((row) => one(row, now)));
  }

  private adoptOne(r: StateAdoptRequest, now: number): StateAdoptResult {
    const name = rowName(r.key);
    const row = this.live(name, now);
    if (row === undefined) {
      const created: Row = {
        type: r.type,
        epoch: 1,
        version: 0,
        schemaVersion: 0,
        state: undefined,
        timers: undefined,
        objectGeneration: r.objectGeneration,
        authorityOwnerGeneration: 0,
        ownerRid: r.owner.rid,
        savedAt: now,
        destroyedAt: undefined,
      };
      this.rows.set(name, created);
      return { ok: true, saved: saved(created) };
    }
    if (row.objectGeneration > r.objectGeneration && r.force !== true)
      return { ok: false, reason: 'newerOwner', objectGeneration: row.objectGeneration };
    row.epoch += 1;
    row.objectGeneration = r.objectGeneration;
    row.ownerRid = r.owner.rid;
    // A tombstone adopted again is a live row without state: its epoch must not expire with it.
    row.destroyedAt = undefined;
    return { ok: true, saved: saved(row) };
  }

  private writeOne(w: StateWrite, now: number): StateWriteResult {
    const row = this.live(rowName(w.key), now);
    if (row === undefined) return { ok: false, reason: 'absent' };
    if (row.epoch !== w.epoch) return { ok: false, reason: 'fenced', epoch: row.epoch };
    if (row.version !== w.expected) return { ok: false, reason: 'version', version: row.version };
    row.version = w.expected + 1;
    row.type = w.type;
    row.schemaVersion = w.schemaVersion;
    row.state = copy(w.state);
    row.timers = copy(w.timers);
    row.objectGeneration = w.authority.objectGeneration;
    row.authorityOwnerGeneration = w.authority.authorityOwnerGeneration;
    row.ownerRid = w.authority.rid;
    row.savedAt = now;
    row.destroyedAt = w.tombstone ? now : undefined;
    return { ok: true, version: row.version };
  }

  /** The row of `name`, or `undefined` when there is none or its tombstone expired (then it is removed). */
  private live(name: string, now: number): Row | undefined {
    const row = this.rows.get(name);
    if (row?.destroyedAt !== undefined && now - row.destroyedAt >= this.tombstoneTtlMs) {
      this.rows.delete(name);
      return undefined;
    }
    return row;
  }
}

const rowName = (key: ObjectKey): string => JSON.stringify([key.mesh, key.kind, key.id]);

function saved(row: Row): SavedState {
  return {
    type: row.type,
    epoch: row.epoch,
    version: row.version,
    schemaVersion: row.schemaVersion,
    state: copy(row.state),
    timers: copy(row.timers),
    savedAt: row.savedAt,
  };
}
