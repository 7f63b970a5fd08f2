import { ZLinkError, cancelledError } from '../errors.js';
import { timerDelay } from './timers.js';
import { decodePayload, passPayload } from '../wire/payload.js';
import { type CallMetrics, LATENCY_SAMPLE_WEIGHT } from '../observe/metrics.js';

/**
 * The pending-request table: every request ends with exactly one terminal among reply, error reply,
 * timeout, cancel (`AbortSignal`), route loss and shutdown. The entry leaves the table on its first
 * terminal, with its timer cleared and its abort listener removed, so anything arriving later finds
 * nothing: it is discarded and counted (`late`), never delivered to another request.
 *
 * Correlation ids come from one process-wide counter and are never reused within a process lifetime,
 * so a late reply can never match a newer request, whichever table it reaches.
 */
let nextCorrelation = 1;

export function newCorrelation(): number {
  return nextCorrelation++;
}

export interface PendingOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Which connection carries the request, so a lost route can end exactly its requests. */
  readonly route: unknown;
  /**
   * Names the call in error messages: "request billing/billing.charge". An object whose `toString`
   * makes the name lets a caller put off building it until an error needs it.
   */
  readonly describe: string | { toString(): string };
  /** The caller-side counters of the call's channel: its terminal and time to terminal go there. */
  readonly metrics?: CallMetrics;
  /**
   * `resolveEncoded` resolves with the reply's payload as msgpack bytes (`passPayload`), not its value:
   * for a caller that only hands the reply on (a session relay).
   */
  readonly raw?: boolean;
}

/**
 * Where a call's single terminal goes: `resolve` with its reply (nothing, for a send), or `reject` with
 * its error (a `ZLinkError` from this table). Called once, never both.
 */
export interface CallSink {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Entry {
  readonly correlation: number;
  readonly route: unknown;
  readonly describe: string | { toString(): string };
  readonly metrics: CallMetrics | undefined;
  readonly raw: boolean;
  readonly sink: CallSink;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  /** As asked, for the Timeout message. */
  readonly timeoutMs: number;
  /** The timeout as a timer delay; it names the entry's lane. */
  readonly delayMs: number;
  /** `performance.now()` at which the request times out. */
  readonly deadline: number;
  /** Neighbours in the lane, oldest first. */
  prev: Entry | undefined;
  next: Entry | undefined;
}

/**
 * Requests opened with the same timeout reach their deadlines in the order they were opened, so
 * each distinct timeout keeps one FIFO lane (a linked list, for O(1) removal on any terminal) and
 * only the lane heads compete for the single timer.
 */
interface Lane {
  head: Entry | undefined;
  tail: Entry | undefined;
}

export interface PendingCounters {
  /** Replies and error replies that found no pending request (after a terminal, or forged). */
  late: number;
  timeouts: number;
  cancelled: number;
}

/**
 * One timer serves every pending request: it is armed for the earliest lane head and moved only
 * when a new request's deadline comes earlier. A terminal leaves it where it is; a timer that fires
 * with nothing due re-arms for the next deadline, or stops when nothing is pending. While nothing
 * is pending it is unreferenced, so it holds no process open (as no per-request timer would).
 */
export class PendingRequests {
  private readonly table = new Map<number, Entry>();
  private readonly lanes = new Map<number, Lane>();
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (`performance.now()` time); `Infinity` when none is armed. */
  private timerAt = Infinity;
  readonly counters: PendingCounters = { late: 0, timeouts: 0, cancelled: 0 };

  get size(): number {
    return this.table.size;
  }

  /**
   * Registers a request and returns its correlation and the promise of its single terminal.
   * Throws `Cancelled` at once when the signal is already aborted (nothing is registered then).
   */
  open(options: PendingOptions): { correlation: number; result: Promise<unknown> } {
    let sink!: CallSink;
    const result = new Promise<unknown>((resolve, reject) => {
      sink = { resolve, reject };
    });
    return { correlation: this.openTo(options, sink), result };
  }

  /**
   * As `open`, the single terminal told to `sink` instead of a promise (a caller that makes none per
   * request: a session's relay). Returns the correlation.
   */
  openTo(options: PendingOptions, sink: CallSink): number {
    const { signal } = options;
    if (signal?.aborted) throw cancelledError(String(options.describe), signal);
    const correlation = newCorrelation();
    let onAbort: (() => void) | undefined;
    if (signal) {
      onAbort = () => {
        if (this.settle(entry)) {
          this.counters.cancelled++;
          ended(entry, 'Cancelled');
          sink.reject(cancelledError(String(options.describe), signal));
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }
    const delayMs = timerDelay(options.timeoutMs);
    const now = performance.now();
    const entry: Entry = {
      correlation,
      route: options.route,
      describe: options.describe,
      metrics: options.metrics,
      raw: options.raw === true,
      sink,
      signal,
      onAbort,
      timeoutMs: options.timeoutMs,
      delayMs,
      deadline: now + delayMs,
      prev: undefined,
      next: undefined,
    };
    this.table.set(correlation, entry);
    this.enqueue(entry, now);
    return correlation;
  }

  /** Completes with a reply. `false` (and counted as late) when nothing is pending under that id. */
  resolve(correlation: number, value: unknown): boolean {
    const entry = this.take(correlation);
    if (!entry) return false;
    ended(entry, 'reply');
    entry.sink.resolve(value);
    return true;
  }

  /**
   * Completes with a reply's encoded payload: its value (its bytes, for a request opened `raw`), or
   * `ProtocolError` when it cannot be decoded. `false` (and counted as late) when nothing is pending
   * under that id. Every reply path uses it.
   */
  resolveEncoded(correlation: number, payload: Uint8Array): boolean {
    const entry = this.take(correlation);
    if (!entry) return false;
    let value: unknown;
    let reason: string | undefined;
    if (entry.raw) {
      const bytes = passPayload(payload);
      if (typeof bytes === 'string') reason = bytes;
      else value = bytes;
    } else {
      const decoded = decodePayload(payload);
      if (decoded.ok) value = decoded.value;
      else reason = decoded.reason;
    }
    if (reason === undefined) {
      ended(entry, 'reply');
      entry.sink.resolve(value);
    } else {
      const what = String(entry.describe);
      failEntry(entry, new ZLinkError('ProtocolError', `${what}: reply could not be decoded: ${reason}`));
    }
    return true;
  }

  /** Completes with an error. `false` (and counted as late) when nothing is pending under that id. */
  reject(correlation: number, error: ZLinkError | ((describe: string) => ZLinkError)): boolean {
    const entry = this.take(correlation);
    if (!entry) return false;
    failEntry(entry, typeof error === 'function' ? error(String(entry.describe)) : error);
    return true;
  }

  /** Ends every request carried by `route` (its connection was lost). Returns how many. */
  failRoute(route: unknown, error: (describe: string) => ZLinkError): number {
    return this.failMatching((entry) => entry.route === route, error);
  }

  /** How many requests `route` still carries (a scan: for retiring a connection, never per call). */
  countRoute(route: unknown): number {
    let n = 0;
    for (const entry of this.table.values()) if (entry.route === route) n++;
    return n;
  }

  /** Ends everything still pending (shutdown), and stops the timer. Returns how many. */
  failAll(error: (describe: string) => ZLinkError): number {
    const n = this.failMatching(() => true, error);
    this.disarm();
    this.lanes.clear();
    return n;
  }

  private failMatching(match: (e: Entry) => boolean, error: (describe: string) => ZLinkError): number {
    let n = 0;
    for (const entry of [...this.table.values()]) {
      if (!match(entry) || !this.settle(entry)) continue;
      failEntry(entry, error(String(entry.describe)));
      n++;
    }
    return n;
  }

  private take(correlation: number): Entry | undefined {
    const entry = this.table.get(correlation);
    if (!entry) {
      this.counters.late++;
      return undefined;
    }
    this.settle(entry);
    return entry;
  }

  /** Removes the entry from the table and its lane, and its listener; `true` only for the first terminal. */
  private settle(entry: Entry): boolean {
    if (!this.table.delete(entry.correlation)) return false;
    this.unlink(entry);
    if (this.table.size === 0) this.timer?.unref();
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    return true;
  }

  private enqueue(entry: Entry, now: number): void {
    let lane = this.lanes.get(entry.delayMs);
    if (lane === undefined) this.lanes.set(entry.delayMs, (lane = { head: undefined, tail: undefined }));
    entry.prev = lane.tail;
    if (lane.tail) lane.tail.next = entry;
    else lane.head = entry;
    lane.tail = entry;
    if (entry.deadline < this.timerAt) this.arm(entry.deadline, now);
    else if (this.table.size === 1) this.timer?.ref();
  }

  /**
   * Empty lanes stay until the timer fires (a steady caller would otherwise rebuild its lane per request).
   */
  private unlink(entry: Entry): void {
    const lane = this.lanes.get(entry.delayMs) as Lane;
    if (entry.prev) entry.prev.next = entry.next;
    else lane.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else lane.tail = entry.prev;
    entry.prev = entry.next = undefined;
  }

  private arm(at: number, now: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    // Rounded up: a timer that still fires a little early finds nothing due and re-arms.
    this.timer = setTimeout(this.expire, timerDelay(Math.ceil(at - now)));
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  /** Times out whatever is due, earliest deadline first across lanes, then re-arms for the next one. */
  private readonly expire = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    for (;;) {
      let first: Entry | undefined;
      for (const [delayMs, lane] of this.lanes) {
        if (lane.head === undefined) this.lanes.delete(delayMs);
        else if (first === undefined || lane.head.deadline < first.deadline) first = lane.head;
      }
      if (first === undefined) return;
      if (first.deadline > now) {
        this.arm(first.deadline, now);
        return;
      }
      this.settle(first);
      this.counters.timeouts++;
      failEntry(
        first,
        new ZLinkError('Timeout', `${String(first.describe)}: no reply within ${first.timeoutMs} ms`),
      );
    }
  };
}

function failEntry(entry: Entry, error: ZLinkError): void {
  ended(entry, error.code);
  entry.sink.reject(error);
}

/**
 * Counts the terminal; a failure, and a sampled reply, is timed from `deadline - delayMs` (so opening
 * a request reads no extra clock).
 */
function ended(entry: Entry, outcome: 'reply' | ZLinkError['code']): void {
  const metrics = entry.metrics;
  if (metrics === undefined) return;
  const { latency } = metrics;
  if (outcome === 'reply') {
    metrics.replies++;
    if (latency.sample()) latency.observe(elapsed(entry), LATENCY_SAMPLE_WEIGHT);
    return;
  }
  metrics.failures.set(outcome, (metrics.failures.get(outcome) ?? 0) + 1);
  latency.observe(elapsed(entry));
}

function elapsed(entry: Entry): number {
  return performance.now() - (entry.deadline - entry.delayMs);
}
