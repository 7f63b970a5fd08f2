import { answerWithin } from '../../core/calls/index.js';
import type { ObjectKey, StoreHealth } from '../../core/ports/index.js';
import type { ResolveResult } from '../resolve/index.js';

/**
 * `read`'s result, or a `StoreFailure` once `ms` passed first — a failure `health` is told of: the read
 * goes on without its caller, and its answer, when it comes, is the store's recovery.
 */
export function untilDeadline(
  read: Promise<ResolveResult>,
  key: ObjectKey,
  ms: number,
  health: StoreHealth,
): Promise<ResolveResult> {
  return answerWithin(read, ms, (): ResolveResult => {
    const error = new Error(`the store did not answer within ${ms} ms`);
    health.failed(`a read of ${key.kind} '${key.id}': ${error.message}`);
    return { tag: 'StoreFailure', key, error };
  });
}
