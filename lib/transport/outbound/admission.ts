import { type ZLinkError, cancelledError } from '../../core/errors.js';
import type { EncodedCall } from '../../core/wire/index.js';
import type { SocketPump } from '../io/index.js';

/** A business record on its way to a chosen target, its payload encoded once. */
export type Submission = EncodedCall;

/**
 * Send admission (docs/protocol.md#when-a-call-is-finished): waits until `pump` has space for one more record
 * and `blocked()` finds nothing wrong, then runs `submit` in that same turn — a caller that queued after an
 * `await` could find the space taken by another waiter woken with it. Waits for space until `deadline`
 * (`Timeout`), and ends on `Cancelled` or whatever `blocked()` reports (the target was lost, the node is
 * closing). A wake-up is no promise the space is still there: every resumption checks again.
 */
export async function admitThen<T>(
  pump: SocketPump,
  call: Submission,
  deadline: number,
  describe: string,
  blocked: () => ZLinkError | undefined,
  submit: () => T,
): Promise<T> {
  for (;;) {
    if (call.signal?.aborted) throw cancelledError(describe, call.signal);
    const error = blocked();
    if (error) throw error;
    if (pump.hasSpace) return submit();
    await pump.waitForSpace(Math.max(1, deadline - Date.now()), call.signal);
  }
}
