/**
 * setTimeout's largest delay; Node fires a longer one after 1 ms, so longer deadlines are capped (~24.8
 * days).
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A deadline as a delay `setTimeout` honours: at least 1 ms, at most `MAX_TIMER_MS`. */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(ms, 1), MAX_TIMER_MS);
}

/**
 * `op`'s outcome, or `late()`'s once `ms` passed without one (what `late` returns resolves, what it
 * throws rejects; `op` goes on either way). The verdict is given only after the event loop read its
 * sockets once more: a loop held busy past `ms` (a synchronous burst of calls, a long GC pause) runs its
 * due timers before the I/O that arrived meanwhile, so an answer that came in time would otherwise be
 * judged missing — and a store that answered judged failed. `setImmediate` runs after that I/O phase.
 */
export function answerWithin<T, L>(op: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  return new Promise<T | L>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          try {
            resolve(late());
          } catch (error) {
            reject(error);
          }
        }),
      timerDelay(ms),
    );
    op.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
