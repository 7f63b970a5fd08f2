import { ZLinkError } from '../../core/errors.js';
import type { ObjectKey } from '../../core/ports/index.js';
import { describeObject } from './turn-context.js';

/** Whether `error` ended a turn that moved with its object (`handOff()`): the new owner answers it. */
export function isHandedOff(error: unknown): boolean {
  return (
    error instanceof ZLinkError &&
    error.code === 'Unavailable' &&
    (error.details as { reason?: unknown } | undefined)?.reason === 'handedOff'
  );
}

/** Ends `job` with its turn's outcome; the job's own failure must not stop the queue behind it. */
export function settle(
  job: { resolve(value: unknown): void; reject(error: unknown): void },
  ok: boolean,
  value: unknown,
): void {
  try {
    if (ok) job.resolve(value);
    else job.reject(value);
  } catch {
    // The job's; the turn is over either way.
  }
}

/** A turn the queue of `key` refuses or ends without running it: `details.reason` names why. */
export function refusedTurn(
  key: ObjectKey,
  code: ZLinkError['code'],
  problem: string,
  reason: string,
  more: object = {},
): ZLinkError {
  return new ZLinkError(code, `turn of ${describeObject(key)}: ${problem}`, { details: { reason, ...more } });
}

/** What a closed queue answers: the close's code and reason (`Unavailable` 'closed' before any). */
export function closedRefusal(
  key: ObjectKey,
  closing: { readonly reason: string; readonly code: ZLinkError['code'] } | undefined,
): ZLinkError {
  const { reason, code } = closing ?? { reason: 'closed', code: 'Unavailable' };
  return refusedTurn(key, code, `the object was deactivated (${reason})`, reason);
}

/**
 * Whether an open or sealed queue takes one more turn, in this order: fenced (`Rejected`), sealed for
 * relocation (`Unavailable`), `depth` turns already waiting at `limit` (`Rejected`); else `undefined`.
 */
export function admissionRefusal(
  key: ObjectKey,
  fenced: boolean,
  phase: 'open' | 'sealed' | 'closed',
  depth: number,
  limit: number,
): ZLinkError | undefined {
  if (fenced) return refusedTurn(key, 'Rejected', 'the owner lease is fenced: no new object work', 'fenced');
  if (phase === 'sealed')
    return refusedTurn(key, 'Unavailable', 'the object is sealed for relocation', 'sealed');
  if (depth >= limit)
    return refusedTurn(key, 'Rejected', `the object queue is full (${limit} turns waiting)`, 'queueFull', {
      limit,
    });
  return undefined;
}
