import { ZLinkError } from '../../core/index.js';

/** Whether `error` ended a turn that moved with its object (`handOff()`): the new owner answers it. */
export function isHandedOff(error: unknown): boolean {
  return (
    error instanceof ZLinkError &&
    error.code === 'Unavailable' &&
    (error.details as { reason?: unknown } | undefined)?.reason === 'handedOff'
  );
}

/** A `submitThen` callback's own failure must not stop the queue behind it. */
export function settle(callback: (value: unknown) => void, value: unknown): void {
  try {
    callback(value);
  } catch {
    // The callback's; the turn is over either way.
  }
}
