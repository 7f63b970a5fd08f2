import type { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { type ConnectionHost, SessionConnection, socketAddressOf } from '../session/index.js';

/**
 * One TCP connection on a `node:net` session listener: the session's connection, its socket, and the
 * frames that wait while the socket asks for a pause (its `write` returned `false`, until `'drain'`).
 * On a `tls` entry `socket` is the TLS socket over `raw`, the TCP one; on `tcp` they are the same.
 */
export class NetConnection extends SessionConnection {
  /** Frames queued this turn, or held while the socket is `blocked`; and their bytes. */
  out: Buffer[] = [];
  outBytes = 0;
  /** The socket's last `write` returned `false`: nothing more is written to it before its `'drain'`. */
  blocked = false;
  /** Its TLS handshake is done (always, without TLS): before it, nothing it is sent can reach it. */
  secured: boolean;

  constructor(
    readonly socket: Socket,
    host: ConnectionHost,
    now: number,
    readonly raw: Socket = socket,
  ) {
    super(host, now, socketAddressOf(raw));
    this.secured = raw === socket;
  }

  /** What waits here, and what the socket (and under TLS the TCP socket) took and not yet handed on. */
  get writeBytes(): number {
    const below = this.raw === this.socket ? 0 : this.raw.writableLength;
    return this.outBytes + this.socket.writableLength + below;
  }
}
