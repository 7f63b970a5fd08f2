/** The part of a zeromq socket a queue writes to. */
export interface SendSocket {
  send(message: Uint8Array | Uint8Array[]): Promise<void>;
}

/**
 * `single`: every record is its own zeromq message. `batched`: the records queued in one event-loop
 * turn (and those queued while a write was in progress) leave as one message, concatenated.
 */
export type SendMode = 'single' | 'batched';

/**
 * The single writer of one zeromq socket for the raw systems (zeromq.js throws EBUSY when two
 * sends overlap). `push` always queues; it returns a promise when the queue is at its limit, and the
 * caller should wait for it before pushing more (admission).
 */
export class SendQueue {
  private bodies: Uint8Array[] = [];
  private dests: (Buffer | undefined)[] = [];
  /** Records not yet handed to zeromq (queued or in the batch being written). */
  private unwritten = 0;
  private writing = false;
  private scheduled = false;
  private closed = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly socket: SendSocket,
    private readonly mode: SendMode,
    private readonly limit = 10_000,
  ) {}

  /** Queues one record for `dest` (a ROUTER routing id; none on a DEALER). */
  push(body: Uint8Array, dest?: Buffer): Promise<void> | undefined {
    this.bodies.push(body);
    this.dests.push(dest);
    this.unwritten++;
    if (!this.writing) {
      if (this.mode === 'single') void this.writeLoop();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    }
    return this.unwritten >= this.limit
      ? new Promise<void>((resolve) => this.waiters.push(resolve))
      : undefined;
  }

  close(): void {
    this.closed = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (!this.writing) void this.writeLoop();
  };

  private async writeLoop(): Promise<void> {
    this.writing = true;
    try {
      while (this.bodies.length > 0 && !this.closed) {
        const bodies = this.bodies;
        const dests = this.dests;
        this.bodies = [];
        this.dests = [];
        if (this.mode === 'single') {
          for (let i = 0; i < bodies.length; i++) {
            await this.write(bodies[i] as Uint8Array, dests[i]);
            this.written(1);
          }
          continue;
        }
        // One message per run of records for the same destination.
        let start = 0;
        for (let i = 1; i <= bodies.length; i++) {
          if (i < bodies.length && sameDest(dests[i], dests[start])) continue;
          const body =
            i - start === 1 ? (bodies[start] as Uint8Array) : Buffer.concat(bodies.slice(start, i));
          await this.write(body, dests[start]);
          this.written(i - start);
          start = i;
        }
      }
    } catch {
      // The socket closed under us (shutdown): the rest is dropped.
    } finally {
      this.writing = false;
    }
  }

  /**
   * A socket with `sendTimeout` (the raw DEALER, `RAW_SEND_RECHECK_MS`) ends a blocked send EAGAIN, and
   * the same message is written again: zeromq.js can miss the wake-up of a send blocked at the
   * high-water mark, and with nothing else happening on the socket it would wait for good (the raw
   * client hung in 2 of 10 one-way runs of one record per send). ZLink's DEALER does the same.
   */
  private async write(body: Uint8Array, dest: Buffer | undefined): Promise<void> {
    for (;;) {
      try {
        return await (dest === undefined ? this.socket.send(body) : this.socket.send([dest, body]));
      } catch (error) {
        if (this.closed || (error as { code?: unknown }).code !== 'EAGAIN') throw error;
      }
    }
  }

  private written(n: number): void {
    this.unwritten -= n;
    while (this.waiters.length > 0 && this.unwritten < this.limit) (this.waiters.shift() as () => void)();
  }
}

function sameDest(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.equals(b));
}
