import { Buffer } from 'node:buffer';
import { Cluster, type Redis } from 'ioredis';
import { answerWithin } from '../../core/calls/index.js';
import { ZLinkError } from '../../core/errors.js';
import {
  STATE_TOMBSTONE_TTL_MS,
  type ObjectKey,
  type StateAdoptRequest,
  type StateAdoptResult,
  type StateStore,
  type StateWrite,
  type StateWriteResult,
  type UnreadableState,
  checkAdoptBatch,
  checkWriteBatch,
} from '../../core/ports/index.js';
import type { RedisConnectionOptions } from './client.js';
import { stateRowKey } from './state-keys.js';
import { type RowName, type StateReply, adoptReply, unreadableRow, writeReply } from './state-replies.js';
import { packScriptRows } from './script-rows.js';
import { STATE_ADOPT, STATE_ADOPT_BATCH, STATE_WRITE, STATE_WRITE_BATCH } from './state-scripts.js';
import { StoreClient, redisTarget } from './store-client.js';

export interface RedisStateStoreOptions extends RedisConnectionOptions {
  /**
   * Names the store in messages: `State Store '<name>' (Redis <where> prefix <keyPrefix>)`; the runtime
   * passes the key of `stateStores` it was registered under.
   * @default 'redis'
   */
  readonly name?: string;
  /**
   * Keeps its rows apart from other stores on one Redis: no `{` or `}`.
   * @default 'zlink-state'
   */
  readonly keyPrefix?: string;
  /**
   * How long a destroyed object's tombstone stays, in ms (an integer >= 1).
   * @default 86400000 (one day)
   */
  readonly tombstoneTtlMs?: number;
  /**
   * How long `start()` keeps trying to reach Redis before it fails `Unavailable` (an integer >= 1).
   * @default 10000
   */
  readonly startTimeoutMs?: number;
}

/** The scripts, as ioredis defines them: the `...Buffer` variants answer bulk strings as Buffers. */
interface ScriptCommands {
  zlinkStateAdoptBuffer(...args: (string | Buffer)[]): Promise<StateReply>;
  zlinkStateWriteBuffer(...args: (string | Buffer)[]): Promise<StateReply>;
  /** The batch forms (`batchOf`): numkeys, the keys, then every row's arguments. */
  zlinkStateAdoptBatchBuffer(...args: (string | number | Buffer)[]): Promise<StateReply[]>;
  zlinkStateWriteBatchBuffer(...args: (string | number | Buffer)[]): Promise<StateReply[]>;
}

/** One row of a batch: the script and its arguments, the row's key first. */
type ScriptCall = readonly [keyof ScriptCommands, string, ...(string | Buffer)[]];

type Client = (Redis | Cluster) & ScriptCommands;

/** Redis answers that say "not now" rather than "not here": `start()` asks again until its deadline. */
const TRANSIENT = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/;
/** How long `start()` waits between two tries. */
const START_RETRY_MS = 100;

const isReplyError = (error: unknown): error is Error =>
  error instanceof Error && error.name === 'ReplyError' && !TRANSIENT.test(error.message);

/**
 * The State Store on Redis (standalone, Sentinel or Cluster; docs/decisions.md#the-redis-provider). One
 * hash per object at `<keyPrefix>:<mesh>:<kind>:<id>`; adopt and write are each one Lua script on that one
 * key (`state-scripts.ts`), so each row is one atomic compare-and-set, on a Cluster too. A batch is one
 * call of the batch script on a single Redis (`batchOf`: the row's script for each key in turn), and one
 * script call per row on a Cluster, sent together as one auto-pipeline per node. Saved bytes travel as
 * they are, both ways.
 *
 * `concurrency` is 2: one batch runs in Redis while the next crosses the network. Redis runs scripts one
 * at a time on one thread, so a third batch in flight would only wait in its queue, and on one
 * connection.
 *
 * Only as durable as that Redis: what its persistence (`appendonly`, `appendfsync`) has not written when it
 * dies is lost, acknowledged or not.
 */
export class RedisStateStore implements StateStore {
  readonly name: string;
  readonly batchLimit = 256;
  readonly concurrency = 2;
  private readonly connection: StoreClient<Client>;
  private readonly client: Client;
  private readonly keyPrefix: string;
  private readonly tombstoneTtlMs: string;
  private readonly startTimeoutMs: number;
  private starting: Promise<void> | undefined;

  /**
   * Throws `Configuration` naming the option when `options` holds a value it cannot take. Connects only at
   * `start()`.
   */
  constructor(options: RedisStateStoreOptions) {
    const {
      name = 'redis',
      keyPrefix = 'zlink-state',
      tombstoneTtlMs = STATE_TOMBSTONE_TTL_MS,
      startTimeoutMs = 10000,
    } = options;
    const refuse = (option: string, rule: string) =>
      new ZLinkError('Configuration', `RedisStateStore options.${option} must be ${rule}`);
    if (typeof name !== 'string' || name.length === 0) throw refuse('name', 'a non-empty string');
    if (typeof keyPrefix !== 'string' || keyPrefix.length === 0 || /[{}]/.test(keyPrefix))
      throw refuse('keyPrefix', 'a non-empty string without { or }');
    for (const [option, value] of Object.entries({ tombstoneTtlMs, startTimeoutMs }))
      if (!Number.isSafeInteger(value) || value < 1) throw refuse(option, 'an integer >= 1');
    const target = redisTarget(options).replace(/^redis:\/\//, '');
    this.name = `State Store '${name}' (Redis ${target} prefix ${keyPrefix})`;
    this.keyPrefix = keyPrefix;
    this.tombstoneTtlMs = String(tombstoneTtlMs);
    this.startTimeoutMs = startTimeoutMs;
    this.connection = new StoreClient<Client>(options, 'State Store', keyPrefix, {
      name: this.name,
      defaults: { lazyConnect: true, enableAutoPipelining: true },
    });
    this.client = this.connection.client;
    this.client.defineCommand('zlinkStateAdopt', { numberOfKeys: 1, lua: STATE_ADOPT });
    this.client.defineCommand('zlinkStateWrite', { numberOfKeys: 1, lua: STATE_WRITE });
    // Its key count comes first in each call.
    this.client.defineCommand('zlinkStateAdoptBatch', { lua: STATE_ADOPT_BATCH });
    this.client.defineCommand('zlinkStateWriteBatch', { lua: STATE_WRITE_BATCH });
  }

  /**
   * Connects, checks that Redis can keep rows (it answers, runs our scripts, and evicts no key without a
   * TTL) and loads the scripts. Asks again until `startTimeoutMs` has passed, then rejects `Unavailable`
   * naming the store and the connection's last error; rejects `Configuration` at once when Redis answers
   * that it cannot keep rows (an eviction policy that may drop them, scripts refused, a wrong password).
   * Once resolved, calling it again resolves at once; after a rejection it tries again.
   */
  start(): Promise<void> {
    this.starting ??= this.open().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  adopt(batch: readonly StateAdoptRequest[]): Promise<StateAdoptResult[]> {
    return this.run(
      checkAdoptBatch,
      batch,
      (r) => [
        'zlinkStateAdoptBuffer',
        stateRowKey(this.keyPrefix, r.key),
        r.type,
        String(r.objectGeneration),
        r.owner.rid,
        r.force ? '1' : '0',
      ],
      adoptReply,
    );
  }

  write(batch: readonly StateWrite[]): Promise<StateWriteResult[]> {
    return this.run(
      checkWriteBatch,
      batch,
      (w) => [
        'zlinkStateWriteBuffer',
        stateRowKey(this.keyPrefix, w.key),
        String(w.epoch),
        String(w.expected),
        String(w.expected + 1),
        w.type,
        String(w.schemaVersion),
        String(w.authority.objectGeneration),
        String(w.authority.authorityOwnerGeneration),
        w.authority.rid,
        w.tombstone ? this.tombstoneTtlMs : '0',
        w.state ? Buffer.from(w.state) : '',
        w.timers ? Buffer.from(w.timers) : '',
      ],
      writeReply,
    );
  }

  /** Quits the connection this store opened; the rows stay in Redis. */
  close(): Promise<void> {
    return this.connection.close();
  }

  /**
   * Checks `batch` whole, sends one script call per row together and reads each row's reply in order.
   * Rejects `Unavailable` naming the store when any row got no answer or an error (the other rows may
   * have been applied: the port's "outcome unknown").
   */
  private async run<R extends { readonly key: ObjectKey }, T>(
    check: (store: StateStore, batch: readonly R[]) => void,
    batch: readonly R[],
    call: (row: R) => ScriptCall,
    read: (reply: StateReply, unreadable: RowName) => T,
  ): Promise<T[]> {
    check(this, batch);
    if (batch.length === 0) return [];
    // The bytes are copied into the calls (`Buffer.from`): a caller's buffer never aliases what is sent.
    const replies = await this.send(batch.map(call));
    try {
      return replies.map((reply, i) => read(reply, (why) => this.unreadable(batch[i]!.key, why)));
    } catch (error) {
      throw new ZLinkError('ProtocolError', `${this.name}: ${(error as Error).message}`, { cause: error });
    }
  }

  private async send(calls: readonly ScriptCall[]): Promise<StateReply[]> {
    if (!(this.client instanceof Cluster)) return this.sendBatch(calls);
    // No call spans the nodes of a Cluster: one call per row, and the calls made in one tick leave as one
    // auto-pipeline per node (`enableAutoPipelining`).
    const results = await Promise.allSettled(
      calls.map(([command, ...args]) => this.client[command](...args)),
    );
    const settled = results.map((r): [Error | null, unknown] =>
      r.status === 'fulfilled' ? [null, r.value] : [r.reason as Error, null],
    );
    const failed = settled.find(([error]) => error !== null);
    if (failed || settled.length !== calls.length)
      throw this.unavailable(failed?.[0] ?? new Error(`${settled.length} replies to ${calls.length} rows`));
    return settled.map(([, reply]) => reply as StateReply);
  }

  /**
   * A single Redis: the whole batch as one call of the batch script (`batchOf`): numkeys, every row's key,
   * then every row's arguments packed as one (`packScriptRows`).
   */
  private async sendBatch(calls: readonly ScriptCall[]): Promise<StateReply[]> {
    const command =
      calls[0]![0] === 'zlinkStateAdoptBuffer' ? 'zlinkStateAdoptBatchBuffer' : 'zlinkStateWriteBatchBuffer';
    const keys: string[] = [];
    const rows: (readonly (string | Buffer)[])[] = [];
    for (const [, key, ...rest] of calls) {
      keys.push(key);
      rows.push(rest);
    }
    let replies: StateReply[];
    try {
      replies = await this.client[command](keys.length, ...keys, packScriptRows(rows));
    } catch (error) {
      throw this.unavailable(error);
    }
    if (!Array.isArray(replies) || replies.length !== calls.length)
      throw this.unavailable(new Error(`${String(replies?.length)} replies to ${calls.length} rows`));
    return replies;
  }

  private unavailable(error: unknown): ZLinkError {
    const failure = this.connection.failure(error);
    return new ZLinkError('Unavailable', failure.message, { cause: failure.cause });
  }

  private unreadable(key: ObjectKey, why: string): UnreadableState {
    const what = `${key.kind} '${key.id}' of mesh '${key.mesh}'`;
    return unreadableRow(this.name, what, stateRowKey(this.keyPrefix, key), why);
  }

  private async open(): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      try {
        await answerWithin(this.check(), Math.max(1, left), () => {
          throw new Error(`no answer within ${this.startTimeoutMs} ms`);
        });
        return;
      } catch (error) {
        if (error instanceof ZLinkError) throw error;
        if (isReplyError(error))
          throw new ZLinkError('Configuration', `${this.name}: Redis refused: ${error.message}`, {
            cause: error,
          });
        if (deadline - Date.now() <= 0) {
          const { cause } = this.connection.failure(error);
          const why = cause instanceof Error ? cause.message : String(cause);
          const message = `${this.name}: not reached within ${this.startTimeoutMs} ms: ${why}`;
          throw new ZLinkError('Unavailable', message, { cause });
        }
        // ioredis reconnects on its own schedule; asking again soon finds Redis as soon as it is back.
        await new Promise((done) => setTimeout(done, Math.min(START_RETRY_MS, deadline - Date.now())));
      }
    }
  }

  /** One try of `start()`: each node (one, or a Cluster's masters) answers, keeps rows, has the scripts. */
  private async check(): Promise<void> {
    const info = await this.client.info('memory');
    const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    for (const node of nodes) {
      const policy = /^maxmemory_policy:(\S+)/m.exec(
        node === this.client ? info : await node.info('memory'),
      )?.[1];
      if (policy?.startsWith('allkeys-'))
        throw new ZLinkError(
          'Configuration',
          `${this.name}: Redis has maxmemory-policy ${policy}, which may evict a row: an evicted row ` +
            'would let an epoch be given twice. Use noeviction (or a volatile-* policy: it evicts only ' +
            'tombstones)',
        );
      const scripts = [STATE_ADOPT, STATE_WRITE, STATE_ADOPT_BATCH, STATE_WRITE_BATCH];
      await Promise.all(scripts.map((lua) => node.script('LOAD', lua)));
    }
  }
}
