import { type ObjectKey, timerDelay } from '../../core/index.js';
import type { ResolveResult } from '../resolve/index.js';

/** `read`'s result, or a `StoreFailure` once `ms` passed first. */
export function untilDeadline(
  read: Promise<ResolveResult>,
  key: ObjectKey,
  ms: number,
): Promise<ResolveResult> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        resolve({ tag: 'StoreFailure', key, error: new Error(`the store did not answer within ${ms} ms`) }),
      timerDelay(ms),
    );
    read.then(
      (result) => {
        clearTimeout(timer);
        resolve(result);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
