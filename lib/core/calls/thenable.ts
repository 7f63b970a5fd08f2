/** Whether `value` is a promise or any other thenable: the test every "sync or async" path shares. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * One promise, already resolved, shared: the answer of a send queued in the caller's own turn (channel,
 * Node direct, object, fanout: a queued record needs no promise of its own — a new one per send was about
 * 30 bytes of garbage on the hottest path there is), and the start of a microtask. Callers only await or
 * chain it, or compare it (a send that was queued at once).
 */
export const RESOLVED: Promise<void> = Promise.resolve();
