import { REMOTE_CODES, type WireError, ZLinkError, errorMessage } from '../../core/errors.js';
import type { ObjectKey, StateWrite, StateWriteResult } from '../../core/ports/index.js';
import type { NormalizedPersistOptions } from '../../core/objects/index.js';
import { encodePayload } from '../../core/wire/index.js';
import type { DurableTimer } from '../execution/index.js';
import { describeRefusal, encodeTimers, sameBytes, sameTimers } from './state-rows.js';
import type { StateBatcher } from './state-batcher.js';

/**
 * The durable state of one persistent activation (docs/decisions.md#durable-state): the epoch its
 * owner writes under, the version the store holds, and the writes on their way. One write per object is
 * in flight at a time; what is captured meanwhile replaces what waits (one write for a burst of turns),
 * and every waiter of a capture is answered once a write carrying it, or a later one, is acknowledged.
 *
 * A capture is numbered when its bytes differ from the last captured; `saved` is the number of the last
 * one the store acknowledged. An every-turn object holds each turn's reply (and pushes) on the capture
 * that ended the turn, so no caller hears of a turn whose state a crash could still lose.
 */
export interface DurableAuthority {
  readonly objectGeneration: number;
  readonly authorityOwnerGeneration: number;
}

/** What an activation's durable state works with besides its store. */
export interface DurableDeps {
  readonly key: ObjectKey;
  readonly type: string;
  readonly persist: NormalizedPersistOptions;
  readonly rid: string;
  /** The authority the activation holds now (written into the row for operators). */
  readonly authority: () => DurableAuthority;
  /** The counters of its type: writes by result. */
  readonly metrics: { readonly stateWrites: { ok: number; failed: number; fenced: number } };
  /** The durable timers live now (`ObjectTimers.durableTimers`), saved with the state. */
  readonly timers: () => readonly DurableTimer[];
  /**
   * The store refused a write `fenced` (another owner adopted the row) or found no row: this activation
   * is not the object's owner any more and must stop (the host discards it, `takenOver`).
   */
  readonly deposed: (why: string) => void;
}

/** Where an activation's state stands in the store, as a move hands it over or a snapshot shows it. */
export interface DurableHandover {
  readonly epoch: number;
  readonly version: number;
}

/** One waiter for a capture: a held reply or push, or an explicit `save()`. */
interface Hold {
  readonly seq: number;
  readonly ok: () => void;
  readonly fail: (error: WireError) => void;
}

/** `writing` while the tombstone is on its way: no other write starts. */
const TOMBSTONE = -1;

/** Waits before a failed write is tried again (every-turn mode): a store outage is not hammered. */
const RETRY_MS = [50, 100, 200, 500, 1000] as const;

/** How many `version` answers in a row a write takes for its own lost ones before it calls it a failure. */
const MAX_VERSION_SKIPS = 3;

export class DurableState {
  /** The number of the last capture whose bytes changed. */
  private seq = 0;
  /** The number of the last capture the store acknowledged. */
  private saved = 0;
  private lastBytes: Uint8Array | undefined;
  /** The durable timers of the last capture, encoded (`undefined`: none). */
  private lastTimers: Uint8Array | undefined;
  /** The capture in flight (its number), or 0. */
  private writing = 0;
  private holds: Hold[] = [];
  /** Sends made in the running turn, held until the state it leaves is saved (see `hold`). */
  private turnSends: (() => void)[] = [];
  private failures = 0;
  /** `version` answers in a row (see `written`). */
  private versionSkips = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Set once the store fenced this owner, or it stopped: nothing is written any more. */
  private stopped: string | undefined;
  /**
   * Why the last write failed, while the state in memory is not in the store (every-turn mode): new
   * calls are refused until a write lands.
   */
  unsaved: string | undefined;

  constructor(
    private readonly deps: DurableDeps,
    private readonly batcher: StateBatcher,
    private epoch: number,
    private version: number,
    /** What the store holds now (restored from), so an unchanged first capture writes nothing. */
    stored: { readonly state: Uint8Array | undefined; readonly timers: Uint8Array | undefined },
  ) {
    this.lastBytes = stored.state;
    this.lastTimers = stored.timers;
  }

  get mode(): NormalizedPersistOptions['mode'] {
    return this.deps.persist.mode;
  }

  /** The version the store acknowledged last (0: nothing saved under this key yet). */
  get savedVersion(): number {
    return this.version;
  }

  /** Whether every capture is in the store. */
  get clean(): boolean {
    return this.saved === this.seq;
  }

  /** Where the state stands, for the target of a move: it writes on with this epoch and version. */
  handover(): DurableHandover {
    return { epoch: this.epoch, version: this.version };
  }

  /**
   * Takes `state` (what `capture()` returned) and the durable timers live now as the object's state:
   * encoded, compared with the last capture and, when either differs, queued for the store. Returns the capture's number, to wait on with
   * `after`. Throws `InvalidArgument` when msgpack cannot hold it or it is over `persist.maxBytes`
   * (nothing queued).
   */
  capture(state: unknown): number {
    let bytes: Uint8Array;
    try {
      bytes = encodePayload(state);
    } catch (error) {
      throw new ZLinkError('InvalidArgument', `${this.what}: capture() returned what msgpack cannot hold`, {
        cause: error,
        details: { reason: 'stateNotEncodable' },
      });
    }
    const { maxBytes } = this.deps.persist;
    if (bytes.length > maxBytes)
      throw new ZLinkError(
        'InvalidArgument',
        `${this.what}: the state is ${bytes.length} bytes, over persist.maxBytes (${maxBytes}); nothing saved`,
        { details: { reason: 'stateTooLarge', bytes: bytes.length, maxBytes } },
      );
    const timers = encodeTimers(this.deps.timers());
    if (
      this.lastBytes !== undefined &&
      sameBytes(this.lastBytes, bytes) &&
      sameTimers(this.lastTimers, timers)
    )
      return this.seq;
    this.lastBytes = bytes;
    this.lastTimers = timers;
    this.seq++;
    this.kick();
    return this.seq;
  }

  /**
   * Calls `ok` once capture `seq` (or a later one) is in the store, at once when it is; `fail` with a
   * `StateNotSaved` or `StateFenced` wire error when the write carrying it failed. Waiters are answered
   * in the order they came, each exactly once.
   */
  after(seq: number, ok: () => void, fail: (error: WireError) => void): void {
    if (seq <= this.saved && this.holds.length === 0) return ok();
    if (this.stopped !== undefined) return fail(this.stoppedError());
    this.holds.push({ seq, ok, fail });
    // An explicit object's failed write waits for its next save: this is one.
    this.kick();
  }

  /** The number of the latest capture: a turn that just ended waits on it. */
  get current(): number {
    return this.seq;
  }

  /** Whether replies wait for their turn's state (every-turn mode, still writing). */
  get holdsReplies(): boolean {
    return this.deps.persist.mode === 'everyTurn' && this.stopped === undefined;
  }

  /**
   * Holds `send` (a push) until the state it may show is saved: inside the object's turn, until the
   * capture that ends the turn (`turnEnded`); outside it, until the latest capture. A send whose
   * capture is not saved is dropped: the client never hears of a state a crash could undo.
   */
  hold(send: () => void, inTurn: boolean): void {
    if (!inTurn) return this.after(this.seq, send, dropSend);
    this.turnSends.push(send);
  }

  /** The running turn ended with capture `seq`: its held sends wait for it, in the order made. */
  turnEnded(seq: number): void {
    if (this.turnSends.length === 0) return;
    for (const send of this.turnSends.splice(0)) this.after(seq, send, dropSend);
  }

  /** The running turn's capture failed: what it sent is dropped. */
  dropTurn(): void {
    this.turnSends.length = 0;
  }

  /** Waits for every capture so far; rejects as `after` fails, with a `ZLinkError`. */
  flushed(): Promise<void> {
    return new Promise((resolve, reject) =>
      this.after(this.seq, resolve, (e) =>
        reject(new ZLinkError('Unavailable', e.message, { details: e.details })),
      ),
    );
  }

  /**
   * Marks the object destroyed in the store: a tombstone at the current epoch, once the write in flight
   * (if any) ended; call it with the object sealed (no capture comes meanwhile). Nothing is written after
   * it. Rejects with `Unavailable` when the store did not take it: the object then writes on as before.
   */
  async tombstone(): Promise<void> {
    await this.flushed().catch(() => undefined);
    // A retry waiting (every-turn, the store failing) waits for the tombstone's answer: one write at once.
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.writing = TOMBSTONE;
    let result: StateWriteResult;
    try {
      result = await this.batcher.write(this.row(undefined, undefined));
    } catch (error) {
      this.writing = 0;
      this.kick();
      throw new ZLinkError(
        'Unavailable',
        `${this.what}: the tombstone was not written: ${errorMessage(error)}`,
        {
          cause: error,
          details: { reason: 'stateNotSaved' },
        },
      );
    }
    this.writing = 0;
    if (result.ok) {
      this.version = result.version;
      return this.stop('destroyed');
    }
    if (result.reason === 'version') this.version = result.version;
    if (result.reason === 'fenced' || result.reason === 'absent')
      this.depose(
        result.reason === 'fenced' ? `another owner holds epoch ${result.epoch}` : 'its row is gone',
      );
    else this.kick();
    throw new ZLinkError(
      'Unavailable',
      `${this.what}: the tombstone was refused (${describeRefusal(result)})`,
      {
        details: { reason: result.reason === 'fenced' ? 'stateFenced' : 'stateNotSaved' },
      },
    );
  }

  /** The write of `state` and `timers` at this owner's epoch over the version the store holds. */
  private row(state: Uint8Array | undefined, timers: Uint8Array | undefined): StateWrite {
    return {
      key: this.deps.key,
      type: this.deps.type,
      epoch: this.epoch,
      expected: this.version,
      schemaVersion: this.deps.persist.version,
      state,
      timers,
      authority: this.authority(),
      ...(state === undefined && { tombstone: true as const }),
    };
  }

  /**
   * Stops writing (the activation ended or moved away): waiters still held fail with `why`, a retry is
   * cancelled; a write in flight still settles but starts nothing after it.
   */
  stop(why: string): void {
    if (this.stopped !== undefined) return;
    this.stopped = why;
    clearTimeout(this.retryTimer);
    const holds = this.holds.splice(0);
    for (const h of holds) h.fail(this.stoppedError());
  }

  private get what(): string {
    return `${this.deps.key.kind} '${this.deps.key.id}'`;
  }

  private authority(): { objectGeneration: number; authorityOwnerGeneration: number; rid: string } {
    const a = this.deps.authority();
    return {
      objectGeneration: a.objectGeneration,
      authorityOwnerGeneration: a.authorityOwnerGeneration,
      rid: this.deps.rid,
    };
  }

  /** Starts a write of the latest capture unless one is in flight, waiting to be retried, or stopped. */
  private kick(): void {
    if (this.writing !== 0 || this.retryTimer !== undefined || this.stopped !== undefined) return;
    if (this.saved === this.seq || this.lastBytes === undefined) return;
    const seq = this.seq;
    const state = this.lastBytes;
    const timers = this.lastTimers;
    this.writing = seq;
    this.batcher.write(this.row(state, timers)).then(
      (result) => this.written(seq, result),
      (error: unknown) => this.failed(`the State Store did not answer: ${errorMessage(error)}`),
    );
  }

  private written(seq: number, result: StateWriteResult): void {
    this.writing = 0;
    if (result.ok) {
      this.deps.metrics.stateWrites.ok++;
      this.version = result.version;
      this.saved = seq;
      this.failures = 0;
      this.versionSkips = 0;
      this.unsaved = undefined;
      this.release(seq);
      return this.kick();
    }
    switch (result.reason) {
      case 'version':
        // Same epoch, another version: only this owner's own earlier write, whose answer was lost, can
        // have moved it (docs/decisions.md#durable-state). Written again on top of it, at once; a store
        // that keeps answering so is failing, and is treated as one.
        this.version = result.version;
        if (++this.versionSkips <= MAX_VERSION_SKIPS) return this.kick();
        return this.failed(`the row's version keeps moving (at ${result.version})`);
      case 'fenced':
        return this.depose(`another owner adopted its state (epoch ${result.epoch})`);
      case 'absent':
        return this.depose('its row is gone from the State Store');
      default:
        return this.failed(`the State Store cannot read its row: ${result.error.message}`);
    }
  }

  /**
   * The write in flight did not land: its waiters (and every earlier one) hear it. An every-turn object
   * keeps trying, and refuses new calls until a write lands; an explicit one writes at its next save.
   */
  private failed(why: string): void {
    this.deps.metrics.stateWrites.failed++;
    this.writing = 0;
    this.versionSkips = 0;
    if (this.stopped !== undefined) return;
    const error: WireError = {
      code: REMOTE_CODES.stateNotSaved,
      message: `${this.what}: the turn ran but its state is not saved (${why}); it may or may not be kept`,
      details: { reason: 'stateNotSaved' },
    };
    const holds = this.holds.splice(0);
    for (const h of holds) h.fail(error);
    if (this.mode === 'explicit') return;
    this.unsaved = why;
    const wait = RETRY_MS[Math.min(this.failures++, RETRY_MS.length - 1)] as number;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, wait);
  }

  private depose(why: string): void {
    this.deps.metrics.stateWrites.fenced++;
    this.stop(`fenced: ${why}`);
    this.deps.deposed(why);
  }

  private release(seq: number): void {
    let n = 0;
    while (n < this.holds.length && (this.holds[n] as Hold).seq <= seq) n++;
    if (n === 0) return;
    const done = this.holds.splice(0, n);
    for (const h of done) h.ok();
  }

  private stoppedError(): WireError {
    const fenced = this.stopped?.startsWith('fenced') === true;
    return {
      code: fenced ? REMOTE_CODES.stateFenced : REMOTE_CODES.stateNotSaved,
      message: `${this.what}: the turn ran but its state is not saved: the object ${this.stopped ?? 'stopped'}`,
      details: { reason: fenced ? 'stateFenced' : 'stateNotSaved' },
    };
  }
}

const dropSend = (): void => undefined;
