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
    if (message.length === frames) return message;
    onMalformed(`expected ${frames} frame(s), got ${message.length}`);
  }
}
