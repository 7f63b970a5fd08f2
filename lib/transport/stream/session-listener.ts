import { Buffer } from 'node:buffer';
import type { Stream } from 'zeromq';
import { ListenAddress, STREAM_SEND_HWM_MESSAGES, streamListener } from '../io/index.js';
import { type SessionListenerConfig, SessionListenerBase } from '../session/index.js';
import { HandedBytes, takeChunk } from './handed-bytes.js';
import { StreamConnection } from './stream-connection.js';
import { SESSION_RETRY_WRITE_MS } from '../timing.js';

const isEagain = (error: unknown): boolean => (error as { code?: unknown }).code === 'EAGAIN';
const EMPTY = Buffer.alloc(0);

/**
 * One end-user session listener: a STREAM socket, its connections, and the writer that keeps one slow
 * client from holding back the others.
 *
 * Writes are batched per turn and connection: the frames a turn queued for one connection leave as
 * one zeromq message of at most `chunkBytes` (more waits for the next), at most one in zeromq's hands
 * at a time per connection (a second could pass a first that zeromq refused, and reorder the stream).
 * zeromq refuses a write at a connection's full queue at once (`EAGAIN`); the bytes then wait in the
 * connection's own buffer and are tried again shortly. What zeromq may still hold (`HandedBytes`) and
 * that buffer count together toward `maxPendingBytes` (the connection's `writeBytes`): a frame that
 * finds them past it closes the session `slowConsumer` and drops it, so a client is never held more
 * than `maxPendingBytes` plus one frame. Timers are the listener's, not the connection's: one sweep
 * closes connections whose Hello or heartbeat is overdue.
 */
export class SessionListener extends SessionListenerBase<StreamConnection> {
  private readonly socket: Stream;
  private blocked = new Set<StreamConnection>();
  /** Connections with a write to make, in turn (see `pump`). */
  private writeQueue: StreamConnection[] = [];
  private pumping = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  /**
   * The most one zeromq message carries: a quarter of `maxPendingBytes` over the messages zeromq may
   * hold per connection (its HWM, and the one it is writing), so zeromq never holds more than that
   * quarter for a client. (`maxPendingBytes` is at least 64 KiB, so a message carries 963 bytes or more.)
   */
  private readonly chunkBytes: number;

  constructor(config: SessionListenerConfig) {
    super(config, new ListenAddress(config.options.listen));
    const { listen, heartbeatMs, maxPendingBytes } = config.options;
    this.socket = streamListener(listen.bindHost.includes(':'), heartbeatMs);
    this.chunkBytes = Math.floor(maxPendingBytes / 4 / (STREAM_SEND_HWM_MESSAGES + 1));
  }

  /** Binds and starts reading; rejects when the address cannot be bound. */
  async bind(): Promise<void> {
    await this.address.bind(this.socket);
    this.loop = this.receiveLoop();
    this.listening();
  }

  private async receiveLoop(): Promise<void> {
    for (;;) {
      let message: Buffer[];
      try {
        message = await this.socket.receive();
      } catch {
        return; // closed
      }
      const [id, data] = message as [Buffer, Buffer];
      const key = id.toString('latin1');
      const connection = this.connections.get(key);
      if (data.length > 0) {
        this.framesIn++;
        connection?.receive(data, Date.now());
      } else if (connection) {
        // A disconnect (ours are never told back): the client closed, reset, or half-closed.
        connection.finish('normal', 'the client disconnected', true);
      } else this.accept(id, key);
    }
  }

  private accept(id: Buffer, key: string): void {
    this.accepted(key, new StreamConnection(id, this, Date.now(), new HandedBytes(STREAM_SEND_HWM_MESSAGES)));
  }

  protected enqueue(connection: StreamConnection, frame: Buffer): void {
    connection.out.push(frame);
    connection.pendingBytes += frame.length;
  }

  protected flushConnection(connection: StreamConnection): void {
    if (connection.hasWrite) this.queueWrite(connection);
  }

  /** The connection takes its turn at the writer (at most one turn waits or runs per connection). */
  private queueWrite(connection: StreamConnection): void {
    if (!connection.writing) {
      connection.writing = true;
      this.writeQueue.push(connection);
    }
    if (!this.pumping) void this.pump();
  }

  /**
   * The socket's one writer: zeromq.js takes one send at a time (a second while one waits is refused
   * `EBUSY`), so connections take turns, each writing what it has queued as one message.
   */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      for (let connection = this.writeQueue.shift(); connection; connection = this.writeQueue.shift()) {
        if (this.closed) return;
        await this.writeOut(connection);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async writeOut(connection: StreamConnection): Promise<void> {
    // The empty message that ends a connection goes alone: joined to bytes, it would be data.
    const ending = connection.terminating;
    const data = ending ? EMPTY : takeChunk(connection.out, this.chunkBytes);
    if (!ending && data.length === 0) {
      connection.writing = false;
      return;
    }
    try {
      await this.socket.send([connection.routingId, data]);
      connection.writing = false;
      if (ending) {
        connection.terminating = false;
        return;
      }
      connection.handed.accepted(data.length);
      // `terminate` may have dropped the buffer (and its count) while these bytes were in flight.
      if (!connection.terminating) connection.pendingBytes -= data.length;
      if (connection.hasWrite) this.markDirty(connection);
    } catch (error: unknown) {
      connection.writing = false;
      if (!isEagain(error)) {
        // EHOSTUNREACH: zeromq no longer has the connection (its disconnect is on its way).
        connection.pendingBytes = 0;
        connection.out = [];
        connection.terminating = false;
        return connection.finish('normal', 'the connection is gone', true);
      }
      // Its queue in zeromq is full (a slow reader): the bytes wait here, first again (order), the
      // others go on. Bytes refused after `terminate` dropped the buffer are dropped with it.
      if (!ending && !connection.terminating) connection.out.unshift(data);
      this.blocked.add(connection);
      this.retryTimer ??= setTimeout(() => this.retryBlocked(), SESSION_RETRY_WRITE_MS);
    }
  }

  private retryBlocked(): void {
    this.retryTimer = undefined;
    const blocked = this.blocked;
    this.blocked = new Set();
    // A closed connection too: its Close frame, or the empty message that drops it, must still go.
    for (const connection of blocked) if (connection.hasWrite) this.markDirty(connection);
  }

  /**
   * Ends the TCP connection: what still waits for it here is dropped, and the one writer sends the
   * empty message that closes it (retried while zeromq refuses it). libzmq closes the connection only
   * once what it still holds for it is written out (see `streamListener`): a client that reads nothing
   * never lets that happen, and the kernel drops it instead (TCP_USER_TIMEOUT, Linux).
   */
  protected terminate(connection: StreamConnection): void {
    connection.terminating = true;
    connection.out = [];
    connection.pendingBytes = 0;
    this.queueWrite(connection);
  }

  protected async closeSocket(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.socket.close();
    await this.loop;
  }
}
