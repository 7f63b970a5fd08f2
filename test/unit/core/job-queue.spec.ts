import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { JobQueue } from '../../../lib/core/index.js';

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
