/**
 * Shared test helpers: bounded waits, an event collector, gates you release by hand, free ports
 * and a suite-level list of things to close. Every wait here has a bound; nothing sleeps blindly.
 */
import { createServer } from 'node:net';
import type { ZLinkError, ZLinkEvent, ZLinkEvents } from '../../lib/core/index.js';

/** Resolves once `predicate()` is true; rejects naming `what` after `timeoutMs`. Polls every 5 ms. */
export async function waitFor(
  predicate: () => boolean,
  timeoutMs: number,
  what: string | (() => string) = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) {
      const named = typeof what === 'string' ? what : what();
      throw new Error(`waitFor: ${named} not reached within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Races `promise` against a deadline (the timer is cleared either way). */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what = 'promise'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`within: ${what} did not settle within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise you settle by hand, e.g. to stall a handler until the test lets it go. */
export class Gate<T = void> {
  readonly promise: Promise<T>;
  private resolveFn!: (value: T) => void;
  opened = false;

  constructor() {
    this.promise = new Promise<T>((resolve) => {
      this.resolveFn = resolve;
    });
  }

  open(value?: T): void {
    this.opened = true;
    this.resolveFn(value as T);
  }
}

export type Outcome<T> =
  | { readonly ok: true; readonly value: T; readonly ms: number }
  | { readonly ok: false; readonly error: unknown; readonly code: string | undefined; readonly ms: number };

/** Never rejects: what the call ended with and how long it took. */
export async function outcome<T>(promise: Promise<T>): Promise<Outcome<T>> {
  const t0 = Date.now();
  try {
    const value = await promise;
    return { ok: true, value, ms: Date.now() - t0 };
  } catch (error) {
    return { ok: false, error, code: (error as Partial<ZLinkError>)?.code, ms: Date.now() - t0 };
  }
}

/**
 * Calls `call` one at a time until `stop()`, as a caller of a server that may drain does: a `Rejected`
 * (refused by a draining server: it never ran) is retried and counted; every other outcome is kept in
 * `results`. `stop()` resolves with how many drain refusals were retried.
 */
export function underLoad(call: () => Promise<unknown>): {
  readonly results: Outcome<unknown>[];
  stop(): Promise<number>;
} {
  let running = true;
  let refusedByDrain = 0;
  const results: Outcome<unknown>[] = [];
  const done = (async () => {
    while (running) {
      const r = await outcome(call());
      if (!r.ok && r.code === 'Rejected') refusedByDrain++;
      else results.push(r);
    }
  })();
  return {
    results,
    stop: async () => {
      running = false;
      await done;
      return refusedByDrain;
    },
  };
}

/** The event variant(s) whose `type` is `K`. */
export type EventOf<K extends ZLinkEvent['type']> = ZLinkEvent & { readonly type: K };

/** Records every event of a runtime; `next` waits (bounded) for one matching a predicate. */
export class EventCollector {
  readonly events: ZLinkEvent[] = [];
  private waiters: { match: (e: ZLinkEvent) => boolean; resolve: (e: ZLinkEvent) => void }[] = [];
  private readonly unsubscribe: () => void;

  constructor(source: ZLinkEvents) {
    this.unsubscribe = source.subscribe((event) => {
      this.events.push(event);
      for (const w of [...this.waiters]) {
        if (w.match(event)) {
          this.waiters = this.waiters.filter((x) => x !== w);
          w.resolve(event);
        }
      }
    });
  }

  of<K extends ZLinkEvent['type']>(type: K): EventOf<K>[] {
    return this.events.filter((e): e is EventOf<K> => e.type === type);
  }

  /** The first recorded event matching `match` (already seen or still to come), within `timeoutMs`. */
  next<K extends ZLinkEvent['type']>(
    type: K,
    match: (e: EventOf<K>) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<EventOf<K>> {
    const test = (e: ZLinkEvent): boolean => e.type === type && match(e as EventOf<K>);
    const seen = this.events.find(test);
    if (seen) return Promise.resolve(seen as EventOf<K>);
    const waiting = new Promise<ZLinkEvent>((resolve) => this.waiters.push({ match: test, resolve }));
    return within(waiting, timeoutMs, `event ${type}`) as Promise<EventOf<K>>;
  }

  clear(): void {
    this.events.length = 0;
  }

  /** Stops recording (named `close` so a `Cleanup` list can hold it). */
  close(): void {
    this.unsubscribe();
  }
}

/** A TCP port nothing listens on right now (bound on 127.0.0.1 then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Anything with a `close()`: runtimes, raw zeromq sockets, collectors. */
export interface Closable {
  close(): unknown;
}

/**
 * A suite-level list of things to close. Register in the test, call `closeAll()` in `afterEach`;
 * gates registered here are opened first so stalled handlers can finish.
 */
export class Cleanup {
  private items: Closable[] = [];
  private gates: Gate<unknown>[] = [];

  add<T extends Closable>(item: T): T {
    this.items.push(item);
    return item;
  }

  gate<T = void>(): Gate<T> {
    const gate = new Gate<T>();
    this.gates.push(gate as Gate<unknown>);
    return gate;
  }

  async closeAll(): Promise<void> {
    for (const g of this.gates.splice(0)) g.open();
    const items = this.items.splice(0).reverse();
    for (const item of items) {
      try {
        await within(Promise.resolve(item.close()), 10000, 'close');
      } catch (error) {
        // Keep closing the rest; report the first failure through the test output.
        console.error('cleanup failed', error);
      }
    }
  }
}

/**
 * Sends waves of 64 concurrent one-way sends until one ends `Timeout` (a send queue that stayed
 * full) or `maxSends` went out; `send` starts one. Returns how the sends ended.
 */
export async function sendWavesUntilTimeout(
  send: () => Promise<void>,
  maxSends: number,
): Promise<{ accepted: number; timedOut: Outcome<void>[]; others: Outcome<void>[] }> {
  let accepted = 0;
  const timedOut: Outcome<void>[] = [];
  const others: Outcome<void>[] = [];
  for (let wave = 0; wave < maxSends / 64 && timedOut.length === 0; wave++) {
    const results = await Promise.all(Array.from({ length: 64 }, () => outcome(send())));
    for (const r of results) {
      if (r.ok) accepted++;
      else if (r.code === 'Timeout') timedOut.push(r);
      else others.push(r);
    }
  }
  return { accepted, timedOut, others };
}
