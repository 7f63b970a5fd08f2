import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import {
  PendingRequests,
  ZLinkError,
  decodePayload,
  encodePayload,
  newCorrelation,
} from '../../../../lib/core/index.js';

/**
 * Contract: every request ends with exactly one terminal among reply, error reply, timeout, cancel,
 * route loss and shutdown; anything after it is discarded and counted, and nothing is resent
 * (docs/protocol.md#exactly-one-terminal, docs/protocol.md#no-resend-after-selection).
 */

type Outcome = { ok: true; value: unknown } | { ok: false; error: ZLinkError };

/** Captures the single outcome of a pending promise without leaving a rejection unhandled. */
function capture(result: Promise<unknown>): { outcome: () => Promise<Outcome> } {
  const settled = result.then(
    (value): Outcome => ({ ok: true, value }),
    (error: ZLinkError): Outcome => ({ ok: false, error }),
  );
  return { outcome: () => settled };
}

const routeA = { name: 'route-a' };
const routeB = { name: 'route-b' };
const lost = (d: string): ZLinkError => new ZLinkError('RouteError', `${d}: connection lost`);
const shutdown = (d: string): ZLinkError => new ZLinkError('Shutdown', `${d}: shutting down`);

beforeEach(() => {
  jest.useFakeTimers();
});

afterEach(() => {
  jest.useRealTimers();
});

describe('PendingRequests: each terminal on its own', () => {
  it('reply resolves the request with the value', async () => {
    const table = new PendingRequests();
    const { correlation, result } = table.open({
      timeoutMs: 1000,
      route: routeA,
      describe: 'request billing/charge',
    });
    const out = capture(result);
    expect(table.resolve(correlation, { ok: 1 })).toBe(true);
    expect(await out.outcome()).toEqual({ ok: true, value: { ok: 1 } });
  });

  it("an encoded reply resolves with its value, or, opened raw, with the payload's bytes as they came", async () => {
    const table = new PendingRequests();
    const payload = encodePayload({ hand: ['7h', 'Qs'], score: 12 });
    const decoded = table.open({ timeoutMs: 1000, route: routeA, describe: 'req a' });
    const raw = table.open({ timeoutMs: 1000, route: routeA, describe: 'req b', raw: true });
    const od = capture(decoded.result);
    const or = capture(raw.result);
    expect(table.resolveEncoded(decoded.correlation, payload)).toBe(true);
    expect(table.resolveEncoded(raw.correlation, payload)).toBe(true);
    expect(await od.outcome()).toEqual({ ok: true, value: { hand: ['7h', 'Qs'], score: 12 } });
    expect(await or.outcome()).toEqual({ ok: true, value: payload });
  });

  it('a reply that cannot be decoded ends ProtocolError with the same words, raw or not', async () => {
    const table = new PendingRequests();
    const broken = Buffer.from([0x92, 0x01]); // an array of two with one item
    const reason = (decodePayload(broken) as { reason: string }).reason;
    for (const raw of [false, true]) {
      const { correlation, result } = table.open({ timeoutMs: 1000, route: routeA, describe: 'req', raw });
      const out = capture(result);
      expect(table.resolveEncoded(correlation, broken)).toBe(true);
      const o = await out.outcome();
      expect(!o.ok && [o.error.code, o.error.message]).toEqual([
        'ProtocolError',
        `req: reply could not be decoded: ${reason}`,
      ]);
    }
  });

  it('error reply rejects with the given error (object or factory)', async () => {
    const table = new PendingRequests();
    const a = table.open({ timeoutMs: 1000, route: routeA, describe: 'req a' });
    const b = table.open({ timeoutMs: 1000, route: routeA, describe: 'req b' });
    const oa = capture(a.result);
    const ob = capture(b.result);
    const err = new ZLinkError('RemoteError', 'boom');
    expect(table.reject(a.correlation, err)).toBe(true);
    expect(table.reject(b.correlation, (d) => new ZLinkError('Rejected', `${d}: draining`))).toBe(true);
    expect(await oa.outcome()).toEqual({ ok: false, error: err });
    const rb = await ob.outcome();
    expect(rb.ok).toBe(false);
    expect(!rb.ok && rb.error.code).toBe('Rejected');
    expect(!rb.ok && rb.error.message).toBe('req b: draining');
  });

  it('timeout rejects with Timeout exactly at timeoutMs (fake timers)', async () => {
    const table = new PendingRequests();
    const { correlation, result } = table.open({ timeoutMs: 500, route: routeA, describe: 'req t' });
    const out = capture(result);
    jest.advanceTimersByTime(499);
    expect(table.size).toBe(1);
    jest.advanceTimersByTime(1);
    expect(table.size).toBe(0);
    const r = await out.outcome();
    expect(!r.ok && r.error.code).toBe('Timeout');
    expect(!r.ok && r.error.message).toContain('req t');
    expect(table.counters.timeouts).toBe(1);
    // The reply that shows up afterwards is late.
    expect(table.resolve(correlation, 'too late')).toBe(false);
    expect(table.counters.late).toBe(1);
  });

  it('cancel via AbortSignal rejects with Cancelled carrying the reason', async () => {
    const table = new PendingRequests();
    const ac = new AbortController();
    const { result } = table.open({ timeoutMs: 1000, signal: ac.signal, route: routeA, describe: 'req c' });
    const out = capture(result);
    const reason = new Error('user gave up');
    ac.abort(reason);
    expect(table.size).toBe(0);
    const r = await out.outcome();
    expect(!r.ok && r.error.code).toBe('Cancelled');
    expect(!r.ok && r.error.cause).toBe(reason);
    expect(table.counters.cancelled).toBe(1);
  });

  it('failRoute ends exactly the requests carried by that route', async () => {
    const table = new PendingRequests();
    const a1 = table.open({ timeoutMs: 1000, route: routeA, describe: 'a1' });
    const b1 = table.open({ timeoutMs: 1000, route: routeB, describe: 'b1' });
    const a2 = table.open({ timeoutMs: 1000, route: routeA, describe: 'a2' });
    const [oa1, ob1, oa2] = [capture(a1.result), capture(b1.result), capture(a2.result)];
    expect(table.failRoute(routeA, lost)).toBe(2);
    expect(table.size).toBe(1);
    for (const [o, d] of [
      [oa1, 'a1'],
      [oa2, 'a2'],
    ] as const) {
      const r = await o.outcome();
      expect(!r.ok && r.error.code).toBe('RouteError');
      expect(!r.ok && r.error.message).toBe(`${d}: connection lost`);
    }
    expect(table.resolve(b1.correlation, 'b')).toBe(true);
    expect(await ob1.outcome()).toEqual({ ok: true, value: 'b' });
    expect(table.failRoute(routeA, lost)).toBe(0);
  });

  it('failAll ends everything still pending', async () => {
    const table = new PendingRequests();
    const opened = [routeA, routeB, routeA].map((route, i) =>
      table.open({ timeoutMs: 1000, route, describe: `r${i}` }),
    );
    const outs = opened.map((o) => capture(o.result));
    expect(table.failAll(shutdown)).toBe(3);
    expect(table.size).toBe(0);
    for (const o of outs) {
      const r = await o.outcome();
      expect(!r.ok && r.error.code).toBe('Shutdown');
    }
    expect(table.failAll(shutdown)).toBe(0);
  });
});

type Terminal = 'reply' | 'error' | 'timeout' | 'abort' | 'failRoute' | 'failAll';
const TERMINALS: readonly Terminal[] = ['reply', 'error', 'timeout', 'abort', 'failRoute', 'failAll'];
const EXPECTED: Record<Terminal, Outcome | { ok: false; code: string }> = {
  reply: { ok: true, value: 'the reply' },
  error: { ok: false, code: 'RemoteError' },
  timeout: { ok: false, code: 'Timeout' },
  abort: { ok: false, code: 'Cancelled' },
  failRoute: { ok: false, code: 'RouteError' },
  failAll: { ok: false, code: 'Shutdown' },
};

describe('PendingRequests: exactly one terminal', () => {
  it('whatever order the terminals arrive in, the first one wins and the rest are no-ops', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray([...TERMINALS], { minLength: TERMINALS.length }),
        async (order) => {
          const table = new PendingRequests();
          const ac = new AbortController();
          const { correlation, result } = table.open({
            timeoutMs: 100,
            signal: ac.signal,
            route: routeA,
            describe: 'req',
          });
          const out = capture(result);
          const lateReplies: boolean[] = [];
          const ended: number[] = [];
          for (const t of order) {
            switch (t) {
              case 'reply':
                lateReplies.push(table.resolve(correlation, 'the reply'));
                break;
              case 'error':
                lateReplies.push(table.reject(correlation, new ZLinkError('RemoteError', 'remote failed')));
                break;
              case 'timeout':
                jest.advanceTimersByTime(100);
                break;
              case 'abort':
                ac.abort();
                break;
              case 'failRoute':
                ended.push(table.failRoute(routeA, lost));
                break;
              case 'failAll':
                ended.push(table.failAll(shutdown));
                break;
            }
            expect(table.size).toBe(0);
          }
          const first = order[0] as Terminal;
          const r = await out.outcome();
          const expected = EXPECTED[first];
          if (expected.ok) expect(r).toEqual(expected);
          else
            expect([r.ok, !r.ok && r.error.code]).toEqual([false, 'code' in expected ? expected.code : '']);

          // Reply and error reply return true only as the first terminal; afterwards they are late.
          const replyFirst = first === 'reply' || first === 'error';
          expect(lateReplies.filter((x) => x)).toHaveLength(replyFirst ? 1 : 0);
          expect(table.counters.late).toBe(replyFirst ? 1 : 2);
          // failRoute/failAll count a request only when they end it.
          expect(ended.reduce((s, n) => s + n, 0)).toBe(first === 'failRoute' || first === 'failAll' ? 1 : 0);
          expect(table.counters.timeouts).toBe(first === 'timeout' ? 1 : 0);
          expect(table.counters.cancelled).toBe(first === 'abort' ? 1 : 0);
          // Released: no timer left, no abort listener left.
          expect(jest.getTimerCount()).toBe(0);
          expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a reply for an id that was never opened is late and reaches nobody', async () => {
    const table = new PendingRequests();
    const { correlation, result } = table.open({ timeoutMs: 1000, route: routeA, describe: 'req' });
    const out = capture(result);
    expect(table.resolve(correlation + 1_000_000, 'forged')).toBe(false);
    expect(table.reject(correlation + 1_000_001, new ZLinkError('RemoteError', 'forged'))).toBe(false);
    expect(table.counters.late).toBe(2);
    expect(table.size).toBe(1);
    expect(table.resolve(correlation, 'real')).toBe(true);
    expect(await out.outcome()).toEqual({ ok: true, value: 'real' });
  });
});

describe('PendingRequests: correlation ids', () => {
  it('strictly increase and are never reused across tables', () => {
    const t1 = new PendingRequests();
    const t2 = new PendingRequests();
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) {
      const table = i % 3 === 0 ? t2 : t1;
      const { correlation, result } = table.open({ timeoutMs: 1000, route: routeA, describe: 'r' });
      result.catch(() => undefined);
      ids.push(correlation);
      // Ending a request must not free its id for reuse.
      if (i % 2 === 0) table.resolve(correlation, null);
      if (i % 7 === 0) ids.push(newCorrelation());
    }
    t1.failAll(shutdown);
    t2.failAll(shutdown);
    for (let i = 1; i < ids.length; i++) expect(ids[i] as number).toBeGreaterThan(ids[i - 1] as number);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => Number.isSafeInteger(id) && id > 0)).toBe(true);
  });
});

describe('PendingRequests: cancellation before registration', () => {
  it('an already-aborted signal throws Cancelled and registers nothing', () => {
    const table = new PendingRequests();
    const ac = new AbortController();
    ac.abort(new Error('before'));
    const before = newCorrelation();
    let thrown: unknown;
    try {
      table.open({ timeoutMs: 1000, signal: ac.signal, route: routeA, describe: 'req early' });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ZLinkError);
    expect((thrown as ZLinkError).code).toBe('Cancelled');
    expect((thrown as ZLinkError).message).toContain('req early');
    expect(table.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    // No correlation was consumed either.
    expect(newCorrelation()).toBe(before + 1);
  });
});

describe('PendingRequests: resources are released', () => {
  it('timers and abort listeners go away with each terminal; table size back to 0', async () => {
    const table = new PendingRequests();
    const ac = new AbortController();
    const open = (route: object = routeA): { correlation: number; result: Promise<unknown> } => {
      const o = table.open({ timeoutMs: 1000, signal: ac.signal, route, describe: 'r' });
      o.result.catch(() => undefined);
      return o;
    };
    const a = open();
    const b = open();
    open(routeB);
    open(routeB);
    open();
    expect(table.size).toBe(5);
    // One timer for the whole table, however many requests are pending.
    expect(jest.getTimerCount()).toBe(1);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(5);

    table.resolve(a.correlation, 1);
    table.reject(b.correlation, new ZLinkError('RemoteError', 'x'));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(3);

    expect(table.failRoute(routeB, lost)).toBe(2);
    expect(jest.getTimerCount()).toBe(1);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);

    jest.advanceTimersByTime(1000);
    expect(table.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(table.counters).toEqual({ late: 0, timeouts: 1, cancelled: 0 });
  });

  it('a timeout beyond the 32-bit timer range does not fire early (it is capped at 2^31-1 ms)', async () => {
    const table = new PendingRequests();
    const { result } = table.open({ timeoutMs: 3_000_000_000, route: routeA, describe: 'long' });
    const out = capture(result);
    jest.advanceTimersByTime(60_000);
    expect(table.size).toBe(1);
    jest.advanceTimersByTime(2 ** 31 - 1 - 60_000);
    expect(table.size).toBe(0);
    const r = await out.outcome();
    expect(!r.ok && r.error.code).toBe('Timeout');
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('PendingRequests: one timer, one lane per timeout', () => {
  /** Records how requests end, in order, as `name:outcome@ms` (ms since the recorder started). */
  function recorder(table: PendingRequests) {
    const ended: string[] = [];
    const t0 = performance.now();
    const open = (name: string, timeoutMs: number): number => {
      const { correlation, result } = table.open({ timeoutMs, route: routeA, describe: name });
      const at = (): number => performance.now() - t0;
      result.then(
        () => ended.push(`${name}:reply@${at()}`),
        (e: ZLinkError) => ended.push(`${name}:${e.code}@${at()}`),
      );
      return correlation;
    };
    return { ended, open };
  }
  const settle = async (): Promise<void> => {
    for (let j = 0; j < 3; j++) await Promise.resolve();
  };
  /** Advances fake time 1 ms at a time; promise handlers run at the time their request ended. */
  const advance = async (ms: number): Promise<void> => {
    await settle();
    for (let i = 0; i < ms; i++) {
      jest.advanceTimersByTime(1);
      await settle();
    }
  };

  it('mixed timeouts fire in deadline order, each exactly at its deadline', async () => {
    const table = new PendingRequests();
    const { ended, open } = recorder(table);
    open('slow', 300);
    open('fast', 100);
    await advance(50);
    open('mid', 200);
    open('fast2', 100);
    await advance(300);
    expect(ended).toEqual(['fast:Timeout@100', 'fast2:Timeout@150', 'mid:Timeout@250', 'slow:Timeout@300']);
    expect(table.size).toBe(0);
    expect(table.counters.timeouts).toBe(4);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('requests that end out of order leave the others their own deadlines', async () => {
    const table = new PendingRequests();
    const { ended, open } = recorder(table);
    const a = open('a', 100);
    await advance(10);
    const b = open('b', 100);
    await advance(10);
    open('c', 100);
    await advance(10);
    const d = open('d', 100);
    table.resolve(b, 'b');
    table.resolve(a, 'a');
    await advance(95);
    table.resolve(d, 'd');
    await advance(1000);
    expect(ended).toEqual(['b:reply@30', 'a:reply@30', 'c:Timeout@120', 'd:reply@125']);
    expect(table.counters).toEqual({ late: 0, timeouts: 1, cancelled: 0 });
  });

  it('a shorter timeout opened later moves the timer earlier; the longer one still waits its own', async () => {
    const table = new PendingRequests();
    const { ended, open } = recorder(table);
    open('long', 1000);
    open('short', 10);
    await advance(1000);
    expect(ended).toEqual(['short:Timeout@10', 'long:Timeout@1000']);
  });

  it('with nothing pending, the timer stops at its deadline without ending anything', () => {
    const table = new PendingRequests();
    const { open } = recorder(table);
    for (let i = 0; i < 3; i++) table.resolve(open(`r${i}`, 100), i);
    jest.advanceTimersByTime(100);
    expect(jest.getTimerCount()).toBe(0);
    expect(table.counters).toEqual({ late: 0, timeouts: 0, cancelled: 0 });
    // And the next request arms it again.
    open('next', 100);
    jest.advanceTimersByTime(100);
    expect(table.counters.timeouts).toBe(1);
  });

  it('shutdown stops the timer at once', () => {
    const table = new PendingRequests();
    const { open } = recorder(table);
    open('a', 100);
    open('b', 5000);
    table.failAll(shutdown);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('the timer keeps the process alive only while something is pending (real timers)', () => {
    jest.useRealTimers();
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const table = new PendingRequests();
    const before = timers();
    const a = table.open({ timeoutMs: 60_000, route: routeA, describe: 'a' });
    expect(timers()).toBe(before + 1);
    table.resolve(a.correlation, 1);
    expect(timers()).toBe(before);
    const b = table.open({ timeoutMs: 60_000, route: routeA, describe: 'b' });
    expect(timers()).toBe(before + 1);
    table.failAll(shutdown);
    b.result.catch(() => undefined);
    expect(timers()).toBe(before);
  });
});
