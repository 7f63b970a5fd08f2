import { Buffer } from 'node:buffer';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import type { SessionCloseReason } from '../../core/wire/index.js';
import type { NormalizedSessionListen } from '../../core/options/index.js';
import { type SessionListenerConfig, SessionListenerBase } from '../session/index.js';
import { NetConnection } from './net-connection.js';

/** Up to this many bytes, a turn's frames for one connection are joined into one buffer to write. */
const JOIN_BYTES = 16 * 1024;

/**
 * One end-user session listener on Node's own sockets: a `net.Server`, with the frames, states and
 * rules every session listener shares (`SessionListenerBase`).
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

  /** A listener for one `tcp` entry of `config`'s listener name. */
  constructor(config: SessionListenerConfig, entry: NormalizedSessionListen) {
    super(config, entry);
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

  private accept(socket: Socket): void {
    if (this.closed) return void socket.destroy();
    const key = String(++this.nextKey);
    const connection = new NetConnection(socket, this, Date.now());
    this.sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      this.framesIn++;
      connection.receive(chunk, Date.now());
    });
    // The client closed, half-closed or reset: the session ends, told as the client's.
    socket.on('end', () => connection.finish('normal', 'the client disconnected', true));
    socket.on('error', () => connection.finish('normal', 'the connection is gone', true));
    socket.on('close', () => {
      connection.finish('normal', 'the connection is gone', true);
      this.connections.delete(key);
      this.sockets.delete(socket);
    });
    socket.on('drain', () => {
      connection.blocked = false;
      this.flushConnection(connection);
    });
    this.accepted(key, connection);
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
    const { socket } = connection;
    if (socket.destroyed) return;
    if (reason === 'slowConsumer') return void socket.resetAndDestroy();
    socket.end();
    setTimeout(() => {
      if (!socket.destroyed) socket.resetAndDestroy();
    }, this.config.options.heartbeatMs).unref();
  }

  protected async closeSocket(): Promise<void> {
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await stopped;
  }
}
