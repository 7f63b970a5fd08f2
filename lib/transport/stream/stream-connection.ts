import type { Buffer } from 'node:buffer';
import { type ConnectionHost, SessionConnection } from '../session/index.js';
import type { HandedBytes } from './handed-bytes.js';

/**
 * One TCP connection on a STREAM session listener: the session's connection, and what waits to be
 * handed to zeromq for it under its routing id.
 */
export class StreamConnection extends SessionConnection {
  /**
   * Frames waiting to be handed to zeromq (queued since the last flush, or held back by a refused
   * write), and their bytes (never below 0: `terminate` drops both at once).
   */
  out: Buffer[] = [];
  pendingBytes = 0;
  /** A write of this connection is in zeromq's hands: the next one waits for it (order). */
  writing = false;
  /**
   * The listener is ending the connection on the socket: what waits in `out` is dropped and the empty
   * message that closes it is the one write left (cleared once zeromq took it).
   */
  terminating = false;

  constructor(
    readonly routingId: Buffer,
    host: ConnectionHost,
    now: number,
    /** What zeromq may still hold of the writes it accepted: counted with `pendingBytes`. */
    readonly handed: HandedBytes,
  ) {
    super(host, now);
  }

  /** What waits to be written, and what zeromq may still hold of what was written. */
  get writeBytes(): number {
    return this.pendingBytes + this.handed.bytes;
  }

  /** Something is left to hand to zeromq: frames, or the empty message that ends the connection. */
  get hasWrite(): boolean {
    return this.out.length > 0 || this.terminating;
  }
}
