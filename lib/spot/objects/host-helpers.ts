import { timerDelay } from '../../core/index.js';

/**
 * Whether `work` fulfilled within `ms` (`false` once `ms` passed first: the work goes on, and its
 * outcome, a later rejection included, is nobody's). Rejects as `work` does when it fails in time.
 */
export function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(false), timerDelay(ms));
    work.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
