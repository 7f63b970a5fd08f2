import { Buffer } from 'node:buffer';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { type SecureContext, TLSSocket, createSecureContext } from 'node:tls';
import type { SessionCloseReason } from '../../core/wire/index.js';
import type { SessionListenerSnapshot } from '../../core/observe/index.js';
import { type NormalizedSessionListen, secureContextOptions } from '../../core/options/index.js';
import type { RemoteAddress } from '../../core/kinds.js';
import {
  PROXY_LISTENER_REFUSALS,
  ProxyHeaderParser,
  type ProxyRefusal,
  RefusalCounts,
  socketAddressOf,
} from '../address/index.js';
import { type SessionListenerConfig, SessionListenerBase, resetSocket } from '../session/index.js';
import { NetConnection } from './net-connection.js';

/** Up to this many bytes, a turn's frames for one connection are joined into one buffer to write. */
const JOIN_BYTES = 16 * 1024;

/**
 * Has a server `TLSSocket` made by hand report its TLS errors after the handshake as `'error'`, as
 * `tls.Server` has its own do once the handshake is done (it releases the socket's control then).
 * Without it Node keeps such an error to itself: a TLS record that cannot be read after the handshake
 * (bytes that are no TLS on the TCP connection, found by the session fuzz) made the TLS layer send its
 * alert and stop reading, while the connection stayed open and uncounted until `idleTimeoutMs`.
 */
function releaseTlsErrors(socket: Socket): void {
  (socket as unknown as { _releaseControl?: () => boolean })._releaseControl?.();
}

/**
 * One end-user session listener entry on Node's own sockets, of kind `tcp` or `tls`: a `net.Server`,
 * with the frames, states and rules every session listener shares (`SessionListenerBase`).
 *
 * A `tls` entry wraps each accepted TCP socket in a server `TLSSocket` (what `tls.Server` does itself),
 * so the connection exists from the TCP accept: its TLS handshake and its Hello together must finish
 * within `helloTimeoutMs`, and it counts toward `maxSessions` from then. A handshake that fails (bytes
 * that are no TLS, a plain TCP client, a version under `minVersion`, a reset) or never finishes in
 * time is counted (`tlsErrors` in the snapshot) and the connection closed, never more.
 *
 * An entry with `proxyProtocol` sits behind a load balancer (docs/sessions.md#behind-a-load-balancer):
 * a peer that is no trusted proxy is refused before any byte is read, and every other connection
 * starts with a PROXY header (v1 or v2), read off the TCP socket before anything else (before the TLS
 * handshake on `tls`) and counted against `helloTimeoutMs` like the handshake; the client it names is
 * the connection's address. A header refused, cut short or too slow closes the connection, counted by
 * reason (`proxyRefusals` in the snapshot).
 *
 * Writes are batched per turn and connection: the frames a turn queued for one connection leave as one
 * `socket.write`. Backpressure is the socket's own: once a `write` returns `false` the connection's
 * frames wait here until the socket's `'drain'`. What waits here and what the socket holds
 * (`writableLength`) count together toward `maxPendingBytes`; a frame that finds them past it closes
 * the session `slowConsumer` and resets the connection at once, so a client that reads nothing costs
 * neither the gateway nor its kernel more than `maxPendingBytes` plus one frame. Nagle is off.
 */
export class NetSessionListener extends SessionListenerBase<NetConnection> {
  private readonly server: Server;
  /**
   * Every socket not yet closed, tombstoned connections' included (an ending socket can outlive its
   * connection's place in `connections`): `close` destroys them all, or the server would wait on them.
   */
  private readonly sockets = new Set<Socket>();
  private nextKey = 0;
  /** A `tls` entry's key and certificate, read once (the options checked them at startup). */
  private readonly secureContext: SecureContext | undefined;
  /** TLS handshakes that failed or never finished, and TLS records that could not be read. */
  tlsErrors = 0;
  /** On an entry with `proxyProtocol`: connections refused for their PROXY header, by reason. */
  private readonly proxyRefusals = new RefusalCounts(PROXY_LISTENER_REFUSALS);

  /** A listener for one `tcp` or `tls` entry of `config`'s listener name. */
  constructor(config: SessionListenerConfig, entry: NormalizedSessionListen) {
    super(config, entry);
    if (entry.kind === 'tls')
      this.secureContext = createSecureContext(
        secureContextOptions(entry.tls as NonNullable<typeof entry.tls>),
      );
    else if (entry.kind !== 'tcp')
      throw new Error(`a node:net session listener serves no '${entry.kind}' entry`);
    this.server = createServer(
      { noDelay: true, keepAlive: true, keepAliveInitialDelay: config.options.heartbeatMs },
      (socket) => this.accept(socket),
    );
  }

  /** Binds and starts accepting; rejects when the address cannot be bound. */
  async bind(): Promise<void> {
    const { host, port } = this.address.bindTarget;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host, port }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    // Past the bind, a server error (EMFILE at an accept, say) leaves the listener as it is.
    this.server.on('error', () => {});
    this.address.boundAt((this.server.address() as AddressInfo).port);
    this.listening();
  }

  private accept(raw: Socket): void {
    const peer = socketAddressOf(raw);
    // No peer: the connection went before its accept ran.
    if (this.closed || peer === undefined) return void raw.destroy();
    if (this.entry.proxyProtocol && !this.entry.trustedProxies.trusts(peer.address))
      return this.refuseUntrusted(raw, peer);
    const key = String(++this.nextKey);
    const proxy = this.entry.proxyProtocol ? new ProxyHeaderParser() : undefined;
    const connection = new NetConnection(
      raw,
      this,
      Date.now(),
      peer,
      this.secureContext !== undefined,
      proxy,
    );
    this.sockets.add(raw);
    raw.on('error', (error: NodeJS.ErrnoException) => this.failed(connection, error));
    const gone = (): void => {
      this.headerCut(connection);
      connection.finish('normal', 'the connection is gone', true);
      this.connections.delete(key);
      this.sockets.delete(raw);
    };
    raw.on('close', gone);
    if (proxy) this.readHeader(connection, gone);
    else this.serve(connection, gone);
    this.accepted(key, connection);
  }

  /**
   * A peer that is no trusted proxy, on an entry that reads a PROXY header: refused before any of its
   * bytes is read (its header, true or not, would name any client it likes), counted, told as a
   * refused session, and closed.
   */
  private refuseUntrusted(raw: Socket, peer: RemoteAddress): void {
    this.proxyRefusals.count('untrusted');
    this.config.events.emit({
      type: 'session',
      state: 'refused',
      listener: this.config.options.listener,
      reason: 'protocolError',
      detail: `PROXY protocol: ${peer.address} is not a trusted proxy`,
    });
    raw.destroy();
  }

  /**
   * Reads the PROXY header off the TCP socket as its bytes come, however they are cut. Once it is whole
   * the client it names (or, for `local`, the peer) is the connection's address, and the bytes after
   * it are the session's: handed to the frame splitter on `tcp`, put back in front of the TCP socket
   * for the TLS socket made over it on `tls`. A refused header closes the connection, counted.
   */
  private readHeader(connection: NetConnection, gone: () => void): void {
    const { raw } = connection;
    const parser = connection.proxy as ProxyHeaderParser;
    const onEnd = (): void => this.headerCut(connection);
    const onData = (chunk: Buffer): void => {
      // Closed while the header came (full, draining, its time up): what it sends is not read.
      if (!connection.open) return;
      const step = parser.push(chunk);
      if (step.state === 'more') return;
      raw.off('data', onData);
      raw.off('end', onEnd);
      if (step.state === 'refused') return this.refuseHeader(connection, step.reason, step.detail);
      connection.proxy = undefined;
      if (step.client !== 'local') connection.remoteAddress = step.client;
      if (connection.tls) {
        // Not read by anyone until the TLS socket takes what the TCP socket holds, as it starts.
        raw.pause();
        if (step.rest.length > 0) raw.unshift(step.rest);
        return this.serve(connection, gone);
      }
      this.serve(connection, gone);
      if (step.rest.length > 0) this.received(connection, step.rest);
    };
    raw.on('data', onData);
    raw.on('end', onEnd);
  }

  /**
   * The TCP connection ended, failed or closed while its PROXY header was being read: refused as
   * `truncated` when part of one came; one that sent nothing (a load balancer's TCP health check, a
   * port scan) simply ends, not counted as a refusal.
   */
  private headerCut(connection: NetConnection): void {
    const parser = connection.proxy;
    if (parser === undefined || !connection.open) return;
    if (parser.heldBytes === 0) return connection.finish('normal', 'the client disconnected', true);
    const step = parser.end();
    if (step.state === 'refused') this.refuseHeader(connection, step.reason, step.detail);
  }

  private refuseHeader(connection: NetConnection, reason: ProxyRefusal, detail: string): void {
    this.proxyRefusals.count(reason);
    connection.finish('protocolError', `PROXY protocol (${reason}): ${detail}`, true);
  }

  /**
   * The session's bytes from now on: on `tls` through a server TLS socket made over the TCP one (it
   * reads what the TCP socket holds first), on `tcp` straight off the TCP socket. `gone` runs once
   * either socket closed.
   */
  private serve(connection: NetConnection, gone: () => void): void {
    const { raw } = connection;
    let socket = raw;
    if (this.secureContext) {
      socket = new TLSSocket(raw, { isServer: true, secureContext: this.secureContext });
      connection.socket = socket;
      socket.once('secure', () => {
        connection.secured = true;
        releaseTlsErrors(socket);
      });
      socket.on('error', (error: NodeJS.ErrnoException) => this.failed(connection, error));
      socket.on('close', gone);
    }
    socket.on('data', (chunk: Buffer) => this.received(connection, chunk));
    // The client closed, half-closed or reset: the session ends, told as the client's.
    socket.on('end', () => connection.finish('normal', 'the client disconnected', true));
    socket.on('drain', () => {
      connection.blocked = false;
      this.flushConnection(connection);
    });
  }

  private received(connection: NetConnection, chunk: Buffer): void {
    this.framesIn++;
    connection.receive(chunk, Date.now());
  }

  /**
   * The socket failed. While a PROXY header was read, that ends the header (see `headerCut`). Under
   * TLS, a failed handshake (whatever came instead: bytes that are no TLS, an old version, a reset) or
   * a TLS record that could not be read is counted and ends the connection `protocolError`; anything
   * else ends it as the client's going.
   */
  private failed(connection: NetConnection, error: NodeJS.ErrnoException): void {
    if (!connection.open) return;
    if (connection.proxy !== undefined) return this.headerCut(connection);
    if (this.secureContext && (!connection.secured || error.code?.startsWith('ERR_SSL') === true)) {
      this.tlsErrors++;
      return connection.finish('protocolError', `TLS: ${error.code ?? error.message}`, true);
    }
    connection.finish('normal', 'the connection is gone', true);
  }

  protected enqueue(connection: NetConnection, frame: Buffer): void {
    connection.out.push(frame);
    connection.outBytes += frame.length;
  }

  protected flushConnection(connection: NetConnection): void {
    const { out, socket } = connection;
    // Before a `tls` connection's TLS socket exists (its PROXY header still coming), frames wait here.
    if (connection.blocked || out.length === 0 || socket.destroyed || !connection.carried) return;
    const bytes = connection.outBytes;
    connection.out = [];
    connection.outBytes = 0;
    let more: boolean;
    if (out.length === 1) more = socket.write(out[0] as Buffer);
    else if (bytes <= JOIN_BYTES) more = socket.write(Buffer.concat(out, bytes));
    else {
      // Many bytes (a burst, or what waited for a 'drain'): one writev, not a second copy of them.
      socket.cork();
      more = true;
      for (const frame of out) more = socket.write(frame);
      socket.uncork();
    }
    if (!more) connection.blocked = true;
  }

  /**
   * Ends the TCP connection; what still waits here is dropped. A slow consumer is reset at once (a
   * FIN would wait behind the bytes it never reads, in the kernel). Any other end flushes what the
   * socket holds (the Close frame) and sends a FIN; a client that neither reads it nor closes within
   * a heartbeat is reset.
   */
  protected terminate(connection: NetConnection, reason: SessionCloseReason): void {
    connection.out = [];
    connection.outBytes = 0;
    const { socket, raw } = connection;
    if (socket.destroyed) return;
    if (connection.proxy !== undefined) {
      // Its PROXY header never came whole: none of its bytes was a session's. One that ran out of time
      // is counted here; the others were counted as they were refused.
      if (reason === 'helloTimeout') this.proxyRefusals.count('timeout');
      return void raw.destroy();
    }
    // A TLS handshake never finished: nothing sent can reach the client, and a TLS end would wait
    // for the handshake (counted in `ended`).
    if (!connection.secured) return void raw.destroy();
    if (reason === 'slowConsumer') return resetSocket(raw);
    socket.end();
    // The TCP socket is reset, not a TLS one: Node resets only a TCP handle (a TLS socket's
    // `resetAndDestroy` throws, here in a timer, out of the process).
    setTimeout(() => resetSocket(raw), this.config.options.heartbeatMs).unref();
  }

  /**
   * A TLS handshake that ran out of time is counted with the refusal's event, not at the close's
   * linger: counted there, a snapshot between the two showed the refusal without it, and a client gone
   * within the linger was never counted (its socket already destroyed).
   */
  override ended(
    connection: NetConnection,
    reason: SessionCloseReason,
    detail: string,
    byClient: boolean,
  ): void {
    if (
      this.secureContext &&
      connection.proxy === undefined &&
      !connection.secured &&
      reason === 'helloTimeout'
    )
      this.tlsErrors++;
    super.ended(connection, reason, detail, byClient);
  }

  override snapshot(): SessionListenerSnapshot {
    return {
      ...super.snapshot(),
      ...(this.secureContext && { tlsErrors: this.tlsErrors }),
      ...(this.entry.proxyProtocol && { proxyRefusals: this.proxyRefusals.snapshot() }),
    };
  }

  protected async closeSocket(): Promise<void> {
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await stopped;
  }
}
