import { type ZLinkError, cancelledError } from '../core/index.js';
import type { SocketPump } from './socket-pump.js';

/** A business record on its way to a chosen target, its payload encoded once. */
export interface Submission {
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * Send admission (02 §3, 03 §4): resolves in the turn in which `pump` has space for one more record
 * and `blocked()` finds nothing wrong, so the caller queues right away; waits for space until
 * `deadline` (`Timeout`), and ends on `Cancelled` or whatever `blocked()` reports (the target was
 * lost, the node is closing). A wake-up is no promise the space is still there: every resumption
 * checks again.
 */
export async function awaitAdmission(
  pump: SocketPump,
  call: Submission,
  deadline: number,
  describe: string,
  blocked: () => ZLinkError | undefined,
): Promise<void> {
  for (;;) {
    if (call.signal?.aborted) throw cancelledError(describe, call.signal);
    const error = blocked();
    if (error) throw error;
    if (pump.hasSpace) return;
    await pump.waitForSpace(Math.max(1, deadline - Date.now()), call.signal);
  }
}
