import type { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import type { SessionRemoteAddress } from '../../core/ports/index.js';
import { type ConnectionHost, SessionConnection } from '../session/index.js';

/** The client's address as the socket knows it at the accept (gone once the socket closed). */
export function remoteOf(socket: Socket): SessionRemoteAddress | undefined {
  const { remoteAddress: address, remotePort: port, remoteFamily: family } = socket;
  return address !== undefined && port !== undefined && family !== undefined
    ? { address, port, family }
    : undefined;
}

/**
 * One TCP connection on a `node:net` session listener: the session's connection, its socket, and the
 * frames that wait while the socket asks for a pause (its `write` returned `false`, until `'drain'`).
 */
export class NetConnection extends SessionConnection {
  /** Frames queued this turn, or held while the socket is `blocked`; and their bytes. */
  out: Buffer[] = [];
  outBytes = 0;
  /** The socket's last `write` returned `false`: nothing more is written to it before its `'drain'`. */
  blocked = false;

  constructor(
    readonly socket: Socket,
    host: ConnectionHost,
    now: number,
  ) {
    super(host, now, remoteOf(socket));
  }

  /** What waits here, and what the socket has taken and not yet handed to the kernel. */
  get writeBytes(): number {
    return this.outBytes + this.socket.writableLength;
  }
}
