/** Whether `value` is a promise or any other thenable: the test every "sync or async" path shares. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * The answer of a send queued in the caller's own turn: one promise, already resolved, shared by every
 * such send. A queued record needs no promise of its own; a new one per send was about 30 bytes of
 * garbage on the hottest path there is. Callers only await or chain it.
 */
export const QUEUED: Promise<void> = Promise.resolve();
