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

/** How long a lost connection's already-received replies get to be read before its requests fail. */
export const LOSS_READ_GRACE_MS = 100;

/**
 * Resolves once `socket` has nothing left to read (its receive loop took it all), or after `maxMs`.
 * zeromq reports a lost connection on its monitor, which a process may read before the replies that
 * arrived just ahead of the loss; those replies are still in the socket and must settle their
 * requests first, rather than the loss ending them `RouteError`.
 */
export async function whileReadable(
  socket: { readonly readable: boolean; readonly closed: boolean },
  maxMs: number,
): Promise<void> {
  const deadline = Date.now() + maxMs;
  do {
    await new Promise((resolve) => setImmediate(resolve));
  } while (!socket.closed && socket.readable && Date.now() < deadline);
}
