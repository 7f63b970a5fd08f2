import { ZLinkError, cancelledError } from '../../core/errors.js';
import { joinRecords } from '../../core/wire/index.js';
import { RESOLVED, timerDelay } from '../../core/calls/index.js';
import { MAX_MESSAGE_BYTES } from './socket-limits.js';

/** The part of a zeromq socket the pump writes to. */
export interface SendableSocket {
  send(message: Uint8Array | (Uint8Array | Buffer)[]): Promise<void>;
  /**
   * Whether a failed write went nowhere and may be written again to the same peer: a send that
   * timed out at the high-water mark (`sendTimeout`, see `SEND_RECHECK_MS`). Absent: never.
   */
  mayRetry?(error: unknown): boolean;
}

/** Records in one zeromq message at most; bounds a batch's size and the time one send holds the loop. */
const MAX_BATCH = 512;
/**
 * Records in the first message of a drain that a reply began (`force` on an idle pump), at most.
 * The peer starts on them while the rest are written, so that in
 * request/reply the two processes work at once instead of in turn: without it, 256 requests
 * outstanding leave as one message and their 256 replies come back as one, and each side waits
 * while the other works (bench, 2 cores: pipelined 167k → 237k req/s for ClientServer, 142k → 219k
 * for Node direct). Later messages of the drain take up to MAX_BATCH.
 */
export const FIRST_BATCH = 64;
/**
 * Bytes one batch stops growing at: half of what a receiver accepts (`MAX_MESSAGE_BYTES`), so 512
 * large records never make a message the peer must refuse (zeromq drops the connection then). A
 * record alone may still be larger.
 */
const MAX_BATCH_BYTES = MAX_MESSAGE_BYTES / 2;

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: ZLinkError) => void;
  readonly timer: NodeJS.Timeout;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
}

export interface PumpOptions {
  /**
   * ROUTER only: a destination zeromq no longer routes to (`EHOSTUNREACH` under `mandatory`),
   * reported once per failed message; its records are gone.
   */
  readonly onUnreachable?: (dest: Buffer) => void;
}

/**
 * The single writer of one zeromq socket and its source-local send queue.
 *
 * zeromq.js rejects a second `send()` while one is blocked (`EBUSY`, synchronously on Router and
 * Publisher too), so every write goes through here. A record queued while the socket is idle is
 * written at the end of the same turn's microtasks (no timer, no added turn); records queued
 * until then, or while a write is in progress, leave together as one zeromq message per
 * destination (a batch), in the order they were queued — except that the first message of a drain
 * a reply began carries at most FIRST_BATCH of them, so that the peer can begin.
 *
 * The queue is bounded: `offer` refuses past `limit`, and `waitForSpace` lets a caller wait until
 * its deadline (then `Timeout`) — the admission rule of a send.
 */
export class SocketPump {
  private dests: (Buffer | undefined)[] = [];
  private records: Uint8Array[] = [];
  private writing = false;
  private closed = false;
  private waiters: Waiter[] = [];

  private readonly onUnreachable: ((dest: Buffer) => void) | undefined;

  /**
   * Whether a write is scheduled or under way. A receive loop that has just answered a frame awaits
   * one microtask when it is, before asking zeromq for its next message: the drain this turn scheduled
   * runs first and the replies reach zeromq before the receive is asked for, as a plain request–reply
   * server's do. zeromq.js reads a socket's ZMQ_EVENTS after every send while a receive is pending, so
   * the other order cost each reply one more ZMQ_EVENTS read — three system calls (issue 32, counted
   * with strace: 24.4 → 23.4 getpid and 16.2 → 15.2 poll per request, raw zeromq.js 23.1 and 15.1).
   */
  get writePending(): boolean {
    return this.writing;
  }

  /**
   * How many records the next drain's first message takes: FIRST_BATCH when a reply (a forced
   * record) found the pump idle, else MAX_BATCH. Calls (`offer`) never split: the answering side
   * starts the overlap, and a one-way sender would pay one more message per burst for nothing.
   */
  private firstBatch = MAX_BATCH;

  constructor(
    private readonly socket: SendableSocket,
    private readonly limit: number,
    private readonly describe: string,
    options: PumpOptions = {},
  ) {
    this.onUnreachable = options.onUnreachable;
  }

  get queued(): number {
    return this.records.length;
  }

  get hasSpace(): boolean {
    return this.records.length < this.limit;
  }

  /**
   * Queues one record for `dest` (a ROUTER routing id; `undefined` on a DEALER). Returns `false`
   * without queuing when the queue is full or the pump is closed.
   */
  offer(record: Uint8Array, dest?: Buffer): boolean {
    if (this.closed || this.records.length >= this.limit) return false;
    this.queue(record, dest, MAX_BATCH);
    return true;
  }

  /** Queues a control record even when the queue is full (handshakes, replies must not deadlock). */
  force(record: Uint8Array, dest?: Buffer): void {
    if (!this.closed) this.queue(record, dest, FIRST_BATCH);
  }

  private queue(record: Uint8Array, dest: Buffer | undefined, firstBatch: number): void {
    this.records.push(record);
    this.dests.push(dest);
    if (!this.writing) {
      this.firstBatch = firstBatch;
      this.schedule();
    }
  }

  /**
   * Resolves when `offer` may succeed; `Timeout` at the deadline, `Cancelled` on abort, `Shutdown` on close.
   */
  waitForSpace(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(new ZLinkError('Shutdown', `${this.describe}: closed`));
    if (this.hasSpace) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(cancelledError(this.describe, signal));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        timer: setTimeout(() => {
          this.removeWaiter(waiter);
          reject(new ZLinkError('Timeout', `${this.describe}: send queue stayed full for ${timeoutMs} ms`));
        }, timerDelay(timeoutMs)),
        onAbort: signal
          ? () => {
              this.removeWaiter(waiter);
              reject(cancelledError(`${this.describe} (waiting for queue space)`, signal));
            }
          : undefined,
      };
      if (signal && waiter.onAbort) signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Drops everything not yet written (the connection it was meant for is gone). */
  purge(): number {
    const n = this.records.length;
    this.records = [];
    this.dests = [];
    this.wakeWaiters();
    return n;
  }

  /** Drops the records not yet written to `dest` (that peer is gone; a new one may take its name). */
  purgeDest(dest: Buffer): number {
    const keep: Uint8Array[] = [];
    const keepDests: (Buffer | undefined)[] = [];
    for (let i = 0; i < this.records.length; i++) {
      const d = this.dests[i];
      if (d !== undefined && d.equals(dest)) continue;
      keep.push(this.records[i] as Uint8Array);
      keepDests.push(d);
    }
    const n = this.records.length - keep.length;
    this.records = keep;
    this.dests = keepDests;
    this.wakeWaiters();
    return n;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Waiters first: purging frees space and would wake them as if they could still send.
    for (const w of this.waiters.splice(0)) {
      this.clearWaiter(w);
      w.reject(new ZLinkError('Shutdown', `${this.describe}: closed`));
    }
    this.purge();
  }

  /**
   * Starts a drain at the end of the current turn's microtasks, not synchronously: everything
   * offered in the same burst — the replies to one incoming batch, the requests its replies set
   * off — then leaves in one zeromq message (two past FIRST_BATCH when a reply began it). A lone
   * record still leaves within the same turn.
   */
  private schedule(): void {
    this.writing = true;
    // A reaction on a settled promise: Node's queueMicrotask wraps every callback in an async
    // resource, which costs several times more per send.
    void RESOLVED.then(this.startDrain);
  }

  private readonly startDrain = (): void => {
    void this.drain();
  };

  private async drain(): Promise<void> {
    this.writing = true;
    let most = this.firstBatch;
    try {
      while (this.records.length > 0 && !this.closed) {
        const records = this.records;
        const dests = this.dests;
        const take = batchSize(records, most);
        most = MAX_BATCH;
        const batch = take === records.length ? records : records.slice(0, take);
        const batchDests = take === dests.length ? dests : dests.slice(0, take);
        if (take === records.length) {
          this.records = [];
          this.dests = [];
        } else {
          this.records = records.slice(take);
          this.dests = dests.slice(take);
        }
        this.wakeWaiters();
        for (;;) {
          try {
            await this.write(batch, batchDests);
          } catch (error) {
            // A send that timed out went nowhere (zeromq writes all of a message or none): again.
            if (!this.closed && this.socket.mayRetry?.(error) === true) continue;
            // A lone destination's failure comes here (see `write`). Otherwise zeromq refuses a
            // write only when the socket closed under us (shutdown, or a lost connection's DEALER):
            // those records were already given up, and their requests ended.
            this.unreachable(error, batchDests[0]);
          }
          break;
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /**
   * Not an async function: the usual batch (a DEALER's, or one ROUTER destination's) hands zeromq's
   * own promise back, one async frame less per message.
   */
  private write(records: Uint8Array[], dests: (Buffer | undefined)[]): Promise<void> {
    const first = dests[0];
    if (first === undefined) return this.socket.send(joinRecords(records));
    for (let i = 1; i < dests.length; i++) {
      if (!(dests[i] as Buffer).equals(first)) return this.writeGroups(records, dests);
    }
    return this.socket.send([first, joinRecords(records)]);
  }

  /** ROUTER: one message per destination, each keeping its records' order. */
  private async writeGroups(records: Uint8Array[], dests: (Buffer | undefined)[]): Promise<void> {
    const groups = new Map<string, { dest: Buffer; records: Uint8Array[] }>();
    for (let i = 0; i < records.length; i++) {
      const dest = dests[i] as Buffer;
      const key = dest.toString('latin1');
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { dest, records: [] }));
      group.records.push(records[i] as Uint8Array);
    }
    for (const group of groups.values()) {
      try {
        await this.socket.send([group.dest, joinRecords(group.records)]);
      } catch (error) {
        // An unroutable destination is reported and does not stop the others.
        if (!this.unreachable(error, group.dest)) throw error;
      }
    }
  }

  /** Reports `dest` when zeromq no longer routes to it; `false` for any other failure. */
  private unreachable(error: unknown, dest: Buffer | undefined): boolean {
    if (dest === undefined || (error as { code?: unknown }).code !== 'EHOSTUNREACH') return false;
    this.onUnreachable?.(dest);
    return true;
  }

  private wakeWaiters(): void {
    while (this.waiters.length > 0 && this.hasSpace) {
      const w = this.waiters.shift() as Waiter;
      this.clearWaiter(w);
      w.resolve();
    }
  }

  private removeWaiter(w: Waiter): void {
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
    this.clearWaiter(w);
  }

  private clearWaiter(w: Waiter): void {
    clearTimeout(w.timer);
    if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
  }
}

/** How many of the queued records leave in the next message: at most `limit`, and MAX_BATCH_BYTES. */
function batchSize(records: readonly Uint8Array[], limit: number): number {
  const most = Math.min(records.length, limit);
  let bytes = 0;
  for (let i = 0; i < most; i++) {
    bytes += (records[i] as Uint8Array).length;
    if (bytes > MAX_BATCH_BYTES) return Math.max(i, 1);
  }
  return most;
}
