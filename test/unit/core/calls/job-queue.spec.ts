import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { JobQueue, ZLinkError } from '../../../../lib/core/index.js';

/** The bounded application job queue: at most `limit` handlers at once; a release hands its permit on. */

/** Tracks whether a promise has settled, without waiting on it. */
function track(p: Promise<void>): { readonly done: boolean } {
  const state = { done: false };
  void p.then(() => {
    state.done = true;
  });
  return state;
}

/** Lets already-queued promise reactions run (no timers involved). */
const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

afterEach(() => {
  jest.useRealTimers();
});

describe('JobQueue', () => {
  it('the limit is respected: tryAcquire fails at the limit', () => {
    const q = new JobQueue(2);
    expect(q.tryAcquire()).toBe(true);
    expect(q.tryAcquire()).toBe(true);
    expect(q.tryAcquire()).toBe(false);
    expect(q.active).toBe(2);
    q.release();
    expect(q.active).toBe(1);
    expect(q.tryAcquire()).toBe(true);
    expect(q.tryAcquire()).toBe(false);
  });

  it('acquire beyond the limit waits until a release', async () => {
    const q = new JobQueue(2);
    await q.acquire();
    await q.acquire();
    const third = track(q.acquire());
    await flush();
    expect(third.done).toBe(false);
    expect(q.active).toBe(2);
    q.release();
    await flush();
    expect(third.done).toBe(true);
    expect(q.active).toBe(2);
  });

  it('a release hands the permit straight to a waiter, so nobody can slip in past the limit', async () => {
    const q = new JobQueue(1);
    expect(q.tryAcquire()).toBe(true);
    const waiter = track(q.acquire());
    q.release();
    // Before the waiter's continuation even runs, the permit is already its own.
    expect(q.active).toBe(1);
    expect(q.tryAcquire()).toBe(false);
    await flush();
    expect(waiter.done).toBe(true);
    q.release();
    expect(q.active).toBe(0);
  });

  it('waiters are served first come, first served and never exceed the limit', async () => {
    const q = new JobQueue(3);
    const order: number[] = [];
    let running = 0;
    let peak = 0;
    const job = async (i: number): Promise<void> => {
      await q.acquire();
      running++;
      peak = Math.max(peak, running);
      order.push(i);
      await flush();
      running--;
      q.release();
    };
    await Promise.all(Array.from({ length: 20 }, (_, i) => job(i)));
    expect(peak).toBe(3);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(q.active).toBe(0);
  });
});

describe('JobQueue release without a permit', () => {
  it('is ignored: the running count never goes negative and the limit still holds', () => {
    const q = new JobQueue(1);
    q.release();
    expect(q.active).toBe(0);
    expect(q.tryAcquire()).toBe(true);
    expect(q.tryAcquire()).toBe(false);
  });
});

describe('JobQueue acquire(signal)', () => {
  it('a signal aborted before the call rejects Cancelled at once and takes no permit', async () => {
    const q = new JobQueue(1);
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    const error = await q.acquire(controller.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZLinkError);
    expect((error as ZLinkError).code).toBe('Cancelled');
    expect((error as ZLinkError).cause).toEqual(new Error('gone'));
    expect(q.active).toBe(0);
  });

  it('an abort while waiting leaves the queue: Cancelled, no permit, and the next waiter is served', async () => {
    const q = new JobQueue(1);
    expect(q.tryAcquire()).toBe(true);
    const controller = new AbortController();
    const aborted = q.acquire(controller.signal).catch((e: unknown) => e);
    const next = track(q.acquire());
    controller.abort();
    expect(((await aborted) as ZLinkError).code).toBe('Cancelled');
    // The one permit goes to the waiter behind the aborted one, not to nobody.
    q.release();
    await flush();
    expect(next.done).toBe(true);
    expect(q.active).toBe(1);
    q.release();
    expect(q.active).toBe(0);
  });

  it('an abort after the grant has no effect: the permit stays held until released', async () => {
    const q = new JobQueue(1);
    expect(q.tryAcquire()).toBe(true);
    const controller = new AbortController();
    const granted = q.acquire(controller.signal);
    q.release();
    await granted;
    controller.abort();
    await flush();
    expect(q.active).toBe(1);
    expect(q.tryAcquire()).toBe(false);
    q.release();
    expect(q.active).toBe(0);
  });

  it('a free permit is granted at once even with a signal, and a later abort changes nothing', async () => {
    const q = new JobQueue(2);
    const controller = new AbortController();
    await q.acquire(controller.signal);
    controller.abort();
    expect(q.active).toBe(1);
    q.release();
    expect(q.active).toBe(0);
  });

  it('many waiters aborted while permits are released: no permit is lost, every free permit comes back', async () => {
    const limit = 4;
    const q = new JobQueue(limit);
    for (let i = 0; i < limit; i++) expect(q.tryAcquire()).toBe(true);
    const waiters = Array.from({ length: 200 }, (_, i) => {
      const controller = new AbortController();
      const state = { granted: false, cancelled: false };
      q.acquire(controller.signal).then(
        () => (state.granted = true),
        () => (state.cancelled = true),
      );
      return { i, controller, state };
    });
    // Interleave: every third waiter aborts, and a permit is released (and handed on) in between.
    let held = limit;
    for (const w of waiters) {
      if (w.i % 3 === 0) w.controller.abort();
      if (w.i % 5 === 0 && held > 0) {
        q.release();
        held--;
      }
      // Aborting a waiter that already holds its permit changes nothing.
      if (w.i % 7 === 0) waiters[Math.max(0, w.i - 7)]?.controller.abort();
    }
    await flush();
    // Release every permit held by a granted waiter, and the ones still held from the start; each
    // release hands the permit to the next live waiter until none is left.
    for (let round = 0; round < 1000 && q.active > 0; round++) {
      q.release();
      await flush();
    }
    expect(q.active).toBe(0);
    for (const w of waiters) expect(w.state.granted !== w.state.cancelled).toBe(true);
    expect(waiters.filter((w) => w.state.cancelled).length).toBeGreaterThan(50);
    expect(waiters.filter((w) => w.state.granted).length).toBeGreaterThan(50);
    // Free count equals capacity: `limit` permits are taken again at once, and no more.
    for (let i = 0; i < limit; i++) expect(q.tryAcquire()).toBe(true);
    expect(q.tryAcquire()).toBe(false);
  });
});
