import { Buffer } from 'node:buffer';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { type SecureContext, TLSSocket, createSecureContext } from 'node:tls';
import type { SessionCloseReason } from '../../core/wire/index.js';
import type { SessionListenerSnapshot } from '../../core/observe/index.js';
import { type NormalizedSessionListen, secureContextOptions } from '../../core/options/index.js';
import { type SessionListenerConfig, SessionListenerBase, resetSocket } from '../session/index.js';
import { NetConnection } from './net-connection.js';

/** Up to this many bytes, a turn's frames for one connection are joined into one buffer to write. */
const JOIN_BYTES = 16 * 1024;

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
    if (this.closed) return void raw.destroy();
    const key = String(++this.nextKey);
    const socket = this.secureContext
      ? new TLSSocket(raw, { isServer: true, secureContext: this.secureContext })
      : raw;
    const connection = new NetConnection(socket, this, Date.now(), raw);
    this.sockets.add(raw);
    if (socket !== raw) socket.once('secure', () => (connection.secured = true));
    socket.on('data', (chunk: Buffer) => {
      this.framesIn++;
      connection.receive(chunk, Date.now());
    });
    // The client closed, half-closed or reset: the session ends, told as the client's.
    socket.on('end', () => connection.finish('normal', 'the client disconnected', true));
    socket.on('error', (error: NodeJS.ErrnoException) => this.failed(connection, error));
    socket.on('close', () => {
      connection.finish('normal', 'the connection is gone', true);
      this.connections.delete(key);
      this.sockets.delete(raw);
    });
    socket.on('drain', () => {
      connection.blocked = false;
      this.flushConnection(connection);
    });
    this.accepted(key, connection);
  }

  /**
   * The socket failed. Under TLS, a failed handshake (whatever came instead: bytes that are no TLS, an
   * old version, a reset) or a TLS record that could not be read is counted and ends the connection
   * `protocolError`; anything else ends it as the client's going.
   */
  private failed(connection: NetConnection, error: NodeJS.ErrnoException): void {
    if (!connection.open) return;
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
    if (connection.blocked || out.length === 0 || socket.destroyed) return;
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
    if (!connection.secured) {
      // A TLS handshake never finished: nothing sent can reach the client, and a TLS end would wait
      // for the handshake. Counted when it ran out of time.
      if (reason === 'helloTimeout') this.tlsErrors++;
      return void raw.destroy();
    }
    if (reason === 'slowConsumer') return resetSocket(raw);
    socket.end();
    setTimeout(() => resetSocket(raw), this.config.options.heartbeatMs).unref();
  }

  override snapshot(): SessionListenerSnapshot {
    const snapshot = super.snapshot();
    return this.secureContext ? { ...snapshot, tlsErrors: this.tlsErrors } : snapshot;
  }

  protected async closeSocket(): Promise<void> {
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await stopped;
  }
}
