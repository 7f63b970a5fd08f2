import { cancelledError } from '../../core/errors.js';
import { timerDelay } from '../../core/calls/index.js';

/**
 * Callers waiting for a state change (a candidate appears, a peer becomes ready): each wakes at the
 * next `wakeAll()`, after its bound, or ends `Cancelled` when its signal aborts. The waiter then
 * looks at the state again itself: a wake-up says only that something changed.
 */
export class WakeList {
  private readonly waiters = new Set<() => void>();

  wait(ms: number, signal: AbortSignal | undefined, describe: string): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancelledError(describe, signal));
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(wake);
      };
      const wake = (): void => {
        done();
        resolve();
      };
      const onAbort = (): void => {
        done();
        reject(cancelledError(describe, signal));
      };
      const timer = setTimeout(wake, timerDelay(ms));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(wake);
    });
  }

  wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
