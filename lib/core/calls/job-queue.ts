import { cancelledError } from '../errors.js';

/** One `acquire()` waiting for a permit; `grant` hands it the permit. */
interface Waiter {
  readonly grant: () => void;
}

/**
 * The bounded application job queue: at most `limit` handlers run at once in the process. A receive
 * loop that cannot get a permit stops reading its socket, so zeromq's HWM pushes back on the sender
 * instead of this process buffering without bound. Replies never take a permit.
 */
export class JobQueue {
  private running = 0;
  private readonly waiters: Waiter[] = [];

  constructor(readonly limit: number) {}

  get active(): number {
    return this.running;
  }

  tryAcquire(): boolean {
    if (this.running >= this.limit) return false;
    this.running++;
    return true;
  }

  /**
   * Resolves once a permit is held; waiters are served first come, first served. Rejects with
   * `Cancelled` when `signal` aborts first (or has already aborted): the wait leaves the queue and
   * holds no permit, so nothing needs releasing. An abort after the grant has no effect.
   */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancelledError('waiting for a job permit', signal));
    if (this.tryAcquire()) return Promise.resolve();
    if (!signal) return new Promise((resolve) => this.waiters.push({ grant: resolve }));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(cancelledError('waiting for a job permit', signal));
      };
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Returns a permit. A release without a held permit is ignored (the count never goes negative). */
  release(): void {
    if (this.running === 0) return;
    const next = this.waiters.shift();
    // Hand the permit straight to a waiter so a burst of releases cannot overshoot the limit.
    if (next) next.grant();
    else this.running--;
  }
}
