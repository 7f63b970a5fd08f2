import type { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import type { RemoteAddress } from '../../core/kinds.js';
import type { ProxyHeaderParser } from '../address/index.js';
import { type ConnectionHost, SessionConnection } from '../session/index.js';

/**
 * One TCP connection on a `node:net` session listener: the session's connection, its sockets, and the
 * frames that wait while the socket asks for a pause (its `write` returned `false`, until `'drain'`).
 * `raw` is the TCP socket; `socket` carries the session's bytes: `raw` itself on `tcp`, on `tls` the
 * TLS socket over it once made (at the accept, or once a PROXY header was read off `raw`).
 */
export class NetConnection extends SessionConnection {
  /** Frames queued this turn, or held while the socket is `blocked` (or not yet made); and their bytes. */
  out: Buffer[] = [];
  outBytes = 0;
  /** The socket's last `write` returned `false`: nothing more is written to it before its `'drain'`. */
  blocked = false;
  /** The socket the session's bytes go through (see the class). */
  socket: Socket;
  /** Its TLS handshake is done (always, without TLS): before it, nothing it is sent can reach it. */
  secured: boolean;
  /**
   * On an entry with `proxyProtocol`: reading the PROXY header off `raw`, from the accept until the
   * header is read (then `undefined`); a connection refused or ended before that keeps it.
   */
  proxy: ProxyHeaderParser | undefined;

  constructor(
    readonly raw: Socket,
    host: ConnectionHost,
    now: number,
    peer: RemoteAddress,
    readonly tls: boolean,
    proxy?: ProxyHeaderParser,
  ) {
    super(host, now, peer);
    this.socket = raw;
    this.secured = !tls;
    this.proxy = proxy;
  }

  /** Whether its session's bytes have a socket yet: not on `tls` before the TLS socket is made. */
  get carried(): boolean {
    return !this.tls || this.socket !== this.raw;
  }

  /**
   * What waits here, and what the socket took and has not handed to the kernel. On `tls` the TLS
   * socket's `writableLength` keeps a write, in clear, until the TLS layer has handed all of its
   * encrypted bytes to the kernel, so the TLS layer's own buffer (the encrypted copy of the write in
   * progress) is counted through it: 64 MiB queued for a client reading nothing cost the process 72.5
   * MiB of RSS under TLS, 70.4 MiB on TCP. The TCP socket under TLS is written by the TLS layer on its
   * handle, never through its own buffer (its `writableLength` stays 0); it is added should that change.
   */
  get writeBytes(): number {
    const below = this.raw === this.socket ? 0 : this.raw.writableLength;
    return this.outBytes + this.socket.writableLength + below;
  }
}
