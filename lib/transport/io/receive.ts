/** The part of a zeromq socket a receive loop reads from. */
export interface ReceivableSocket {
  receive(): Promise<Buffer[]>;
}

/**
 * The next message of exactly `frames` frames, or `undefined` once the socket is closed. A message
 * of another shape never reaches the caller: it is reported (`onMalformed`) and skipped.
 */
export async function nextMessage(
  socket: ReceivableSocket,
  frames: number,
  onMalformed: (reason: string) => void,
): Promise<Buffer[] | undefined> {
  for (;;) {
    let message: Buffer[];
    try {
      message = await socket.receive();
    } catch {
      return undefined; // closed
    }
    if (hasFrames(message, frames, onMalformed)) return message;
  }
}

/**
 * Whether `message` has exactly `frames` frames; one of another shape is reported (`onMalformed`)
 * and must be skipped. For hot receive loops that await `receive()` themselves: `nextMessage` costs
 * them an async call and its extra promise per message.
 */
export function hasFrames(message: Buffer[], frames: number, onMalformed: (reason: string) => void): boolean {
  if (message.length === frames) return true;
  onMalformed(`expected ${frames} frame(s), got ${message.length}`);
  return false;
}

/**
 * What a receive loop has taken, for `afterQueuedReads`: the loop counts every message it takes and
 * says while it is parked in `receive()` (not busy with a message, not held back by a full job queue).
 */
export class ReadProgress {
  taken = 0;
  parked = false;
}

const nextImmediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves once the receive loop behind `reads` took what `socket` already holds — it went a full
 * event-loop turn, I/O poll included, parked and without taking anything — or after `maxMs`.
 * zeromq reports a lost connection on its monitor, which a process may read before the replies that
 * arrived just ahead of the loss; those replies are still in the socket and must settle their
 * requests first, rather than the loss ending them `RouteError`.
 *
 * It never asks the socket itself: `socket.readable` reads ZMQ_EVENTS, which takes zeromq's edge-triggered
 * wake-up from the loop's pending `receive()`; zeromq.js looks again only after its own send or receive on
 * that socket, so a message that arrived just then went unread — on a MeshNode with no peer left to ping, for
 * good (decisions: "A lost route never asks the socket whether it is readable").
 */
export async function afterQueuedReads(
  reads: ReadProgress,
  socket: { readonly closed: boolean },
  maxMs: number,
): Promise<void> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const taken = reads.taken;
    // Two check phases have a poll phase between them: a message whose wake-up came before the
    // first has been taken by the second.
    await nextImmediate();
    await nextImmediate();
    if (socket.closed || Date.now() >= deadline || (reads.parked && reads.taken === taken)) return;
  }
}
