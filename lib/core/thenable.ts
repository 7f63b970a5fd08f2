/** Whether `value` is a promise or any other thenable: the test every "sync or async" path shares. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
