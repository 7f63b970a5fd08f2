import type { CustomTypesConfig, Pool } from 'pg';
import { ZLinkError } from '../../core/errors.js';
import {
  type ObjectKey,
  type SavedState,
  type StateAdoptRequest,
  type StateAdoptResult,
  type StateStore,
  type StateWrite,
  type StateWriteResult,
  type UnreadableState,
  checkAdoptBatch,
  checkWriteBatch,
} from '../../core/ports/index.js';
import { loadPg, storeTypes } from './pg-driver.js';
import {
  type NormalizedPostgresOptions,
  type PostgresStateStoreOptions,
  normalizePostgresOptions,
} from './postgres-options.js';
import { adoptStatement, byteaArray, readStatement, sweepStatement, writeStatement } from './postgres-sql.js';
import { prepareTable } from './postgres-table.js';

export type { PostgresStateStoreOptions } from './postgres-options.js';

/** The most rows one call carries: a few MB of parameters at typical state sizes. */
const BATCH_LIMIT = 1000;
/** How many times a call runs again for rows that changed between its statement and its read. */
const MAX_ROUNDS = 3;
/** The most expired tombstones one sweep deletes (a sweep holds their row locks until it ends). */
const SWEEP_LIMIT = 1000;
/** The largest `schema_version` the table's `integer` column holds. */
const INT4_MAX = 2_147_483_647;

interface Statements {
  readonly adopt: string;
  readonly write: string;
  readonly read: string;
  readonly sweep: string;
}

/** The key columns of a row a statement answers. */
interface RowKey {
  readonly mesh: string;
  readonly kind: string;
  readonly id: string;
}

/** A row as the adopt statement answers it, through the store's int8 parser. */
interface SavedRow extends RowKey {
  readonly type: string;
  readonly epoch: number;
  readonly version: number;
  readonly schema_version: number;
  readonly state: Uint8Array | null;
  readonly timers: Uint8Array | null;
  readonly saved_at: number | null;
  readonly readable: boolean;
}

/** A row as the read of refused rows answers it. */
interface ReadRow extends RowKey {
  readonly epoch: number;
  readonly version: number;
  readonly object_generation: number;
  readonly readable: boolean;
  readonly expired: boolean;
}

/** A key as one string: PostgreSQL text holds no NUL, so it cannot occur inside a part. */
const keyOf = (k: RowKey) => `${k.mesh}\0${k.kind}\0${k.id}`;

/**
 * The State Store on PostgreSQL (docs/decisions.md#the-postgresql-provider-issue-54), through the `pg`
 * package, an optional peer loaded by `start()`. One table, created or checked at start; each `adopt`
 * and each `write` is one statement for its whole batch, the compare-and-set done by the statement's own
 * condition, so PostgreSQL's row locks make each row atomic and a batch of 500 one round trip. Rows it
 * left as they were are then read, to say why. A connection lost or a statement unanswered within
 * `queryTimeoutMs` rejects the call (`Unavailable`: each row's outcome unknown), and the pool opens a new
 * connection for the next. Expired tombstones read as absent, and a sweep deletes them.
 */
export class PostgresStateStore implements StateStore {
  readonly name: string;
  readonly batchLimit = BATCH_LIMIT;
  readonly concurrency: number;
  private readonly options: NormalizedPostgresOptions;
  private readonly statements: Statements;
  private pool: Pool | undefined;
  private types: CustomTypesConfig | undefined;
  private starting: Promise<void> | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  /** Throws `Configuration` naming `PostgresStateStore options.<field>` for a value it cannot take. */
  /** `where`: how errors name the options (`stateStores.players.postgres` when that option built it). */
  constructor(options: PostgresStateStoreOptions = {}, where?: string) {
    this.options = normalizePostgresOptions(options, where);
    this.name = this.options.name;
    this.concurrency = this.options.poolSize;
    const table = this.options.table;
    this.statements = {
      adopt: adoptStatement(table),
      write: writeStatement(table),
      read: readStatement(table),
      sweep: sweepStatement(table),
    };
  }

  /**
   * Loads `pg`, connects, and creates or checks the table. Rejects `Configuration` when `pg` is not
   * installed or the table cannot hold rows (naming the table and the column), `Unavailable` when no
   * connection opens within `connectTimeoutMs`. Calling it again while it runs, or after it succeeded,
   * is harmless; after a failure it tries again.
   */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(this.unavailable('start', 'the store is closed'));
    this.starting ??= this.open().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  /**
   * The port's adopt, one statement for the batch (and a read of the rows it refused). Also refuses
   * `InvalidArgument`, nothing done, text PostgreSQL cannot hold (a NUL, an unpaired surrogate);
   * `Unavailable` before `start()`, after `close()` or when the server does not answer.
   */
  async adopt(batch: readonly StateAdoptRequest[]): Promise<StateAdoptResult[]> {
    checkAdoptBatch(this, batch);
    batch.forEach((r, i) => this.checkRow('adopt', i, r.key, [r.type, r.owner.rid]));
    return this.rounds(
      'adopt',
      batch,
      (rows) => this.adoptRows(rows),
      (row) => this.savedOf(row),
      (r, now) => this.adoptRefusal(r, now),
    );
  }

  /** The port's write, one statement for the batch (and a read of the rows it refused); rejects as adopt. */
  async write(batch: readonly StateWrite[]): Promise<StateWriteResult[]> {
    checkWriteBatch(this, batch);
    batch.forEach((w, i) => this.checkRow('write', i, w.key, [w.type, w.authority.rid], w.schemaVersion));
    return this.rounds(
      'write',
      batch,
      (rows) => this.writeRows(rows),
      (row): StateWriteResult => ({ ok: true, version: row.version }),
      (w, now) => this.writeRefusal(w, now),
    );
  }

  /**
   * Deletes expired tombstones (up to 1000 a call) and resolves with how many; the store also runs it
   * on its own, as often as its tombstone time and at most hourly. Rejects `Unavailable` before
   * `start()`, after `close()` or when the server does not answer.
   */
  async sweep(): Promise<number> {
    const pool = this.ready('sweep');
    try {
      const done = await pool.query({
        name: 'zlink_state_sweep',
        text: this.statements.sweep,
        values: [SWEEP_LIMIT],
      });
      return done.rowCount ?? 0;
    } catch (error) {
      throw this.unavailable('sweep', 'got no answer', error);
    }
  }

  /** Ends the pool's connections (waiting for calls in flight); the rows stay. Harmless twice. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    // A start under way ends its own pool when it sees `closed`.
    await this.starting?.catch(() => undefined);
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  private async open(): Promise<void> {
    const pg = await loadPg(this.name);
    const o = this.options;
    const pool = new pg.Pool({
      ...o.connection,
      max: o.poolSize,
      connectionTimeoutMillis: o.connectTimeoutMs,
      query_timeout: o.queryTimeoutMs,
      keepAlive: true,
      fallback_application_name: 'nestjs-zlink',
    });
    // A connection that fails while idle is dropped by the pool and reported here: without a listener,
    // that report would end the process. The next call opens a new connection.
    pool.on('error', () => undefined);
    try {
      const client = await pool.connect().catch((error: unknown) => {
        throw this.unavailable(
          'start',
          `cannot connect to ${o.target} within ${o.connectTimeoutMs} ms`,
          error,
        );
      });
      try {
        await prepareTable(client, o);
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => undefined);
      if (error instanceof ZLinkError) throw error;
      throw this.unavailable('start', `lost ${o.target} while preparing table ${o.tableName}`, error);
    }
    if (this.closed) return void (await pool.end());
    this.pool = pool;
    this.types = storeTypes(pg);
    const every = Math.min(Math.max(o.tombstoneTtlMs, 1000), 3_600_000);
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), every);
    this.sweeper.unref();
  }

  /**
   * Answers every row of `batch`, in rounds. A round sends `run`'s statement for the rows still
   * unanswered and answers each row it changed with `answer`; the others are read as they are now and
   * answered by `explain`. A row whose read does not explain the refusal (`explain` gives `undefined`)
   * changed between the two statements (a tombstone swept and adopted again, a garbled row mended) and
   * goes to the next round, as if the call had come a little later; never more than `MAX_ROUNDS`.
   */
  private async rounds<R extends { readonly key: ObjectKey }, Done extends RowKey, T>(
    op: 'adopt' | 'write',
    batch: readonly R[],
    run: (rows: R[]) => Promise<Done[]>,
    answer: (done: Done) => T,
    explain: (request: R, now: ReadRow | undefined) => T | undefined,
  ): Promise<T[]> {
    const results: T[] = new Array<T>(batch.length);
    let indexes = batch.map((_, i) => i);
    for (let n = 0; indexes.length > 0; n++) {
      if (n === MAX_ROUNDS)
        throw this.unavailable(op, `${indexes.length} rows kept changing under it; their outcome is unknown`);
      try {
        const done = new Map((await run(indexes.map((i) => batch[i]!))).map((row) => [keyOf(row), row]));
        const refused: number[] = [];
        for (const i of indexes) {
          const row = done.get(keyOf(batch[i]!.key));
          if (row === undefined) refused.push(i);
          else results[i] = answer(row);
        }
        const now = await this.readRows(refused.map((i) => batch[i]!.key));
        indexes = refused.filter((i) => {
          const result = explain(batch[i]!, now.get(keyOf(batch[i]!.key)));
          if (result !== undefined) results[i] = result;
          return result === undefined;
        });
      } catch (error) {
        throw error instanceof ZLinkError
          ? error
          : this.unavailable(op, "got no answer; each row's outcome is unknown", error);
      }
    }
    return results;
  }

  /** The adopt statement for `rows`: the rows it created or bumped. */
  private adoptRows(rows: readonly StateAdoptRequest[]): Promise<SavedRow[]> {
    const forced = rows.filter((r) => r.force === true);
    return this.query<SavedRow>('zlink_state_adopt', this.statements.adopt, [
      ...keyArrays(rows.map((r) => r.key)),
      rows.map((r) => r.type),
      rows.map((r) => r.objectGeneration),
      rows.map((r) => r.owner.rid),
      ...keyArrays(forced.map((r) => r.key)),
    ]);
  }

  /** Why the adopt left `r`'s row as it was, as `now` shows it; `undefined` when `now` does not say. */
  private adoptRefusal(r: StateAdoptRequest, now: ReadRow | undefined): StateAdoptResult | undefined {
    if (now === undefined || now.expired) return undefined; // gone since: adopting now creates it
    if (!now.readable) return this.unreadable(r.key);
    if (now.object_generation > r.objectGeneration && r.force !== true)
      return { ok: false, reason: 'newerOwner', objectGeneration: now.object_generation };
    return undefined;
  }

  /** The write statement for `rows`: the rows it wrote, with their new version. */
  private writeRows(rows: readonly StateWrite[]): Promise<(RowKey & { version: number })[]> {
    return this.query('zlink_state_write', this.statements.write, [
      ...keyArrays(rows.map((w) => w.key)),
      rows.map((w) => w.type),
      rows.map((w) => w.epoch),
      rows.map((w) => w.expected),
      rows.map((w) => w.schemaVersion),
      byteaArray(rows.map((w) => w.state)),
      byteaArray(rows.map((w) => w.timers)),
      rows.map((w) => w.authority.objectGeneration),
      rows.map((w) => w.authority.authorityOwnerGeneration),
      rows.map((w) => w.authority.rid),
      rows.map((w) => w.tombstone === true),
      this.options.tombstoneTtlMs,
    ]);
  }

  /** Why the write left `w`'s row as it was, as `now` shows it; `undefined` when `now` does not say. */
  private writeRefusal(w: StateWrite, now: ReadRow | undefined): StateWriteResult | undefined {
    if (now === undefined || now.expired) return { ok: false, reason: 'absent' };
    if (!now.readable) return this.unreadable(w.key);
    if (now.epoch !== w.epoch) return { ok: false, reason: 'fenced', epoch: now.epoch };
    if (now.version !== w.expected) return { ok: false, reason: 'version', version: now.version };
    return undefined;
  }

  /** The rows of `keys` as they are now (those that exist). */
  private async readRows(keys: readonly ObjectKey[]): Promise<Map<string, ReadRow>> {
    if (keys.length === 0) return new Map();
    const rows = await this.query<ReadRow>('zlink_state_read', this.statements.read, keyArrays(keys));
    return new Map(rows.map((row) => [keyOf(row), row]));
  }

  private async query<Row extends object>(name: string, text: string, values: unknown[]): Promise<Row[]> {
    const pool = this.ready(name);
    const result = await pool.query<Row>({ name, text, values, types: this.types });
    return result.rows;
  }

  /** What an adopt read, or `unreadable` when the row holds what no reader accepts. */
  private savedOf(row: SavedRow): StateAdoptResult {
    const counts = [row.epoch, row.version, row.schema_version, row.saved_at];
    if (!row.readable || !counts.every((n) => Number.isSafeInteger(n) && n! >= 0) || row.epoch < 1)
      return this.unreadable(row);
    const saved: SavedState = {
      type: row.type,
      epoch: row.epoch,
      version: row.version,
      schemaVersion: row.schema_version,
      state: row.state ?? undefined,
      timers: row.timers ?? undefined,
      savedAt: row.saved_at!,
    };
    return { ok: true, saved };
  }

  private unreadable(key: RowKey): UnreadableState {
    const message = `${this.name}: the row of ${key.kind} '${key.id}' of mesh '${key.mesh}' cannot be read (written by another version or by hand); nothing done`;
    return { ok: false, reason: 'unreadable', error: new ZLinkError('ProtocolError', message) };
  }

  /** Refuses, `InvalidArgument`, what PostgreSQL cannot store as given (the port's "cannot take"). */
  private checkRow(
    op: 'adopt' | 'write',
    i: number,
    key: ObjectKey,
    texts: readonly string[],
    schemaVersion?: number,
  ): void {
    const bad = [key.mesh, key.kind, key.id, ...texts].find((t) => t.includes('\0') || !t.isWellFormed());
    const problem =
      bad !== undefined
        ? `${JSON.stringify(bad)} holds a NUL or an unpaired surrogate, which PostgreSQL text cannot hold`
        : schemaVersion !== undefined && schemaVersion > INT4_MAX
          ? `schemaVersion ${schemaVersion} is more than ${INT4_MAX}, the table's integer`
          : undefined;
    if (problem !== undefined)
      throw new ZLinkError(
        'InvalidArgument',
        `${this.name}: ${op} refused, nothing done: row ${i} (${key.kind} '${key.id}'): ${problem}`,
      );
  }

  private ready(op: string): Pool {
    if (this.pool === undefined)
      throw this.unavailable(op, this.closed ? 'the store is closed' : 'the store is not started');
    return this.pool;
  }

  private unavailable(op: string, problem: string, cause?: unknown): ZLinkError {
    const why = cause instanceof Error ? `: ${cause.message}` : '';
    return new ZLinkError('Unavailable', `${this.name}: ${op} ${problem}${why}`, { cause });
  }
}

/** The mesh, kind and id columns of `keys`, as three array parameters. */
function keyArrays(keys: readonly ObjectKey[]): [string[], string[], string[]] {
  return [keys.map((k) => k.mesh), keys.map((k) => k.kind), keys.map((k) => k.id)];
}
