import { ZLinkError, cancelledError } from './errors.js';

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

/** setTimeout's largest delay; Node fires a longer one after 1 ms, so longer deadlines are capped (~24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A deadline as a delay `setTimeout` honours: at least 1 ms, at most `MAX_TIMER_MS`. */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(ms, 1), MAX_TIMER_MS);
}

export interface PendingOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Which connection carries the request, so a lost route can end exactly its requests. */
  readonly route: unknown;
  /** Names the call in error messages: "request billing/billing.charge". */
  readonly describe: string;
}

interface Entry {
  readonly correlation: number;
  readonly route: unknown;
  readonly describe: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: ZLinkError) => void;
  readonly timer: NodeJS.Timeout;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
}

export interface PendingCounters {
  /** Replies and error replies that found no pending request (after a terminal, or forged). */
  late: number;
  timeouts: number;
  cancelled: number;
}

export class PendingRequests {
  private readonly table = new Map<number, Entry>();
  readonly counters: PendingCounters = { late: 0, timeouts: 0, cancelled: 0 };

  get size(): number {
    return this.table.size;
  }

  /**
   * Registers a request and returns its correlation and the promise of its single terminal.
   * Throws `Cancelled` at once when the signal is already aborted (nothing is registered then).
   */
  open(options: PendingOptions): { correlation: number; result: Promise<unknown> } {
    const { signal } = options;
    if (signal?.aborted) throw cancelledError(options.describe, signal);
    const correlation = newCorrelation();
    let resolve!: (value: unknown) => void;
    let reject!: (error: ZLinkError) => void;
    const result = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const timer = setTimeout(() => {
      if (this.settle(correlation)) {
        this.counters.timeouts++;
        reject(new ZLinkError('Timeout', `${options.describe}: no reply within ${options.timeoutMs} ms`));
      }
    }, timerDelay(options.timeoutMs));
    let onAbort: (() => void) | undefined;
    if (signal) {
      onAbort = () => {
        if (this.settle(correlation)) {
          this.counters.cancelled++;
          reject(cancelledError(options.describe, signal));
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }
    this.table.set(correlation, {
      correlation,
      route: options.route,
      describe: options.describe,
      resolve,
      reject,
      timer,
      signal,
      onAbort,
    });
    return { correlation, result };
  }

  /** Completes with a reply. `false` (and counted as late) when nothing is pending under that id. */
  resolve(correlation: number, value: unknown): boolean {
    const entry = this.take(correlation);
    if (!entry) return false;
    entry.resolve(value);
    return true;
  }

  /** Completes with an error. `false` (and counted as late) when nothing is pending under that id. */
  reject(correlation: number, error: ZLinkError | ((describe: string) => ZLinkError)): boolean {
    const entry = this.take(correlation);
    if (!entry) return false;
    entry.reject(typeof error === 'function' ? error(entry.describe) : error);
    return true;
  }

  /** Ends every request carried by `route` (its connection was lost). Returns how many. */
  failRoute(route: unknown, error: (describe: string) => ZLinkError): number {
    return this.failMatching((entry) => entry.route === route, error);
  }

  /** Ends everything still pending (shutdown). Returns how many. */
  failAll(error: (describe: string) => ZLinkError): number {
    return this.failMatching(() => true, error);
  }

  private failMatching(match: (e: Entry) => boolean, error: (describe: string) => ZLinkError): number {
    let n = 0;
    for (const entry of [...this.table.values()]) {
      if (!match(entry) || !this.settle(entry.correlation)) continue;
      entry.reject(error(entry.describe));
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
    this.settle(correlation);
    return entry;
  }

  /** Removes the entry and releases its timer and listener; `true` only for the first terminal. */
  private settle(correlation: number): boolean {
    const entry = this.table.get(correlation);
    if (!entry) return false;
    this.table.delete(correlation);
    clearTimeout(entry.timer);
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    return true;
  }
}
