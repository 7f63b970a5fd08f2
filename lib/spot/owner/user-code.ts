import { userCodeError } from '../../core/errors.js';
import { timerDelay } from '../../core/calls/index.js';

/** Runs user code (a class's construction, a lifecycle hook); what it throws ends as `userCodeError`. */
export async function userCode<T>(what: string, run: () => T | PromiseLike<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw userCodeError(error, what);
  }
}

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
