import type { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { RemoteAddress } from '../../core/kinds.js';
import { type ConnectionHost, SessionConnection } from '../session/index.js';

/**
 * One WebSocket on a session listener: the session's connection, its `ws` WebSocket and the socket
 * under it, and the frames that wait while that socket asks for a pause (a write past its high-water
 * mark, until its `'drain'`).
 */
export class WsConnection extends SessionConnection {
  /** Frames queued this turn, or held while the socket is `blocked` (with their 4-byte prefix); their bytes. */
  out: Buffer[] = [];
  outBytes = 0;
  /** The socket took more than its high-water mark: nothing more is handed to it before its `'drain'`. */
  blocked = false;
  /** The WebSocket close code its end goes with when its reason's is not the one (a text message: 1003). */
  closeCode: number | undefined;

  constructor(
    readonly ws: WebSocket,
    readonly socket: Socket,
    host: ConnectionHost,
    now: number,
    remoteAddress: RemoteAddress,
  ) {
    super(host, now, remoteAddress);
  }

  /**
   * What waits here, and what `ws` and the socket hold and have not handed to the kernel
   * (`bufferedAmount`: the socket's `writableLength`, and messages still being compressed).
   */
  get writeBytes(): number {
    return this.outBytes + this.ws.bufferedAmount;
  }
}
