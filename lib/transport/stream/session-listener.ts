import { Buffer } from 'node:buffer';
import type { Stream } from 'zeromq';
import type { SessionCloseReason } from '../../core/wire/index.js';
import type { SessionListenerSnapshot, ZLinkEvents } from '../../core/observe/index.js';
import type { SessionLinkHandler } from '../../core/ports/index.js';
import type { NormalizedSessionListener } from '../../core/options/index.js';
import { ListenAddress, STREAM_SEND_HWM_MESSAGES, streamListener } from '../io/index.js';
import { HandedBytes, takeChunk } from './handed-bytes.js';
import { type ConnectionHost, StreamConnection } from './stream-connection.js';
import { SESSION_CLOSE_LINGER_MS, SESSION_RETRY_WRITE_MS, SESSION_TOMBSTONE_MS } from '../timing.js';

export interface SessionListenerConfig {
  readonly options: NormalizedSessionListener;
  readonly handler: SessionLinkHandler;
  readonly events: ZLinkEvents;
}

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
 * that buffer count together toward `maxPendingBytes`: a frame that finds them past it closes the
 * session `slowConsumer` and drops it, so a client is never held more than `maxPendingBytes` plus
 * one frame. Timers are the listener's, not the connection's: one sweep closes connections whose
 * Hello or heartbeat is overdue.
 */
export class SessionListener implements ConnectionHost {
  private readonly socket: Stream;
  private readonly address: ListenAddress;
  private readonly connections = new Map<string, StreamConnection>();
  private dirty: StreamConnection[] = [];
  private flushQueued = false;
  private blocked = new Set<StreamConnection>();
  /** Connections with a write to make, in turn (see `pump`). */
  private writeQueue: StreamConnection[] = [];
  private pumping = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private accepting = true;
  private closed = false;
  private open = 0;
  framesIn = 0;
  framesOut = 0;
  /** The most bytes one connection held at once (its buffer and what zeromq may hold) since the bind. */
  peakConnectionBytes = 0;
  /**
   * The most one zeromq message carries: a quarter of `maxPendingBytes` over the messages zeromq may
   * hold per connection (its HWM, and the one it is writing), so zeromq never holds more than that
   * quarter for a client. (`maxPendingBytes` is at least 64 KiB, so a message carries 963 bytes or more.)
   */
  private readonly chunkBytes: number;

  constructor(private readonly config: SessionListenerConfig) {
    const { listen, heartbeatMs, maxPendingBytes } = config.options;
    this.socket = streamListener(listen.bindHost.includes(':'), heartbeatMs);
    this.address = new ListenAddress(listen);
    this.chunkBytes = Math.floor(maxPendingBytes / 4 / (STREAM_SEND_HWM_MESSAGES + 1));
  }

  get options(): NormalizedSessionListener {
    return this.config.options;
  }

  get handler(): SessionLinkHandler {
    return this.config.handler;
  }

  /** Where clients connect (advertise host and bound port), once bound. */
  get endpoint(): string | undefined {
    return this.address.bound ? this.address.endpoint : undefined;
  }

  /** Where this machine reaches the listener (loopback for a wildcard bind), once bound. */
  get localEndpoint(): string | undefined {
    return this.address.bound ? this.address.local : undefined;
  }

  /** Binds and starts reading; rejects when the address cannot be bound. */
  async bind(): Promise<void> {
    const { listener, helloTimeoutMs, idleTimeoutMs } = this.config.options;
    await this.address.bind(this.socket);
    this.loop = this.receiveLoop();
    const sweepMs = Math.max(50, Math.min(1000, helloTimeoutMs / 4, idleTimeoutMs / 4));
    this.sweepTimer = setInterval(() => this.sweep(Date.now()), sweepMs);
    this.sweepTimer.unref();
    this.config.events.emit({ type: 'listening', endpoint: this.endpoint as string, session: listener });
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
    const connection = new StreamConnection(id, this, Date.now(), new HandedBytes(STREAM_SEND_HWM_MESSAGES));
    this.connections.set(key, connection);
    if (!this.accepting) connection.close('goingAway', 'the server is draining');
    else if (this.open >= this.config.options.maxSessions)
      connection.close('full', `${this.config.options.maxSessions} sessions are open`);
    else {
      connection.counted = true;
      this.open++;
    }
  }

  welcomed(connection: StreamConnection): void {
    this.config.events.emit({
      type: 'session',
      state: 'opened',
      listener: this.config.options.listener,
      sessionId: connection.sessionId as string,
    });
  }

  write(connection: StreamConnection, frame: Buffer, limited = true): void {
    const { maxPendingBytes } = this.config.options;
    // What it held before this frame is checked, not after: `handed` stays at the last writes' size
    // (up to a quarter of the limit) after a reading client took them, and one large frame on top of
    // it must not close that client. So the gateway holds at most the limit plus this one frame.
    if (limited && connection.pendingBytes + connection.handed.bytes > maxPendingBytes) {
      connection.close('slowConsumer', `more than ${maxPendingBytes} bytes waited`);
      return;
    }
    connection.out.push(frame);
    connection.pendingBytes += frame.length;
    this.framesOut++;
    const held = connection.pendingBytes + connection.handed.bytes;
    if (held > this.peakConnectionBytes) this.peakConnectionBytes = held;
    this.markDirty(connection);
  }

  private markDirty(connection: StreamConnection): void {
    if (connection.dirty) return;
    connection.dirty = true;
    this.dirty.push(connection);
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushQueued = false;
    const dirty = this.dirty;
    this.dirty = [];
    for (const connection of dirty) {
      connection.dirty = false;
      if (connection.hasWrite) this.queueWrite(connection);
    }
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

  ended(connection: StreamConnection, reason: SessionCloseReason, detail: string, byClient: boolean): void {
    if (connection.counted) this.open--;
    const { listener } = this.config.options;
    this.config.events.emit({
      type: 'session',
      state: connection.sessionId === undefined ? 'refused' : 'closed',
      listener,
      ...(connection.sessionId !== undefined && { sessionId: connection.sessionId }),
      reason,
      detail,
    });
    connection.closedAt = Date.now();
    if (byClient || reason === 'slowConsumer') return this.terminate(connection);
    setTimeout(() => this.terminate(connection), SESSION_CLOSE_LINGER_MS).unref();
  }

  /**
   * Ends the TCP connection: what still waits for it here is dropped, and the one writer sends the
   * empty message that closes it (retried while zeromq refuses it). libzmq closes the connection only
   * once what it still holds for it is written out (see `streamListener`): a client that reads nothing
   * never lets that happen, and the kernel drops it instead (TCP_USER_TIMEOUT, Linux).
   */
  private terminate(connection: StreamConnection): void {
    connection.terminating = true;
    connection.out = [];
    connection.pendingBytes = 0;
    this.queueWrite(connection);
  }

  /** Closes overdue handshakes and silent sessions; forgets connections closed long enough ago. */
  private sweep(now: number): void {
    const { helloTimeoutMs, idleTimeoutMs } = this.config.options;
    for (const [key, connection] of this.connections) {
      if (!connection.open) {
        // Kept a while after its end, so a late disconnect notice is not taken for a new connection.
        if (now - (connection.closedAt ?? now) >= SESSION_TOMBSTONE_MS) this.connections.delete(key);
      } else if (connection.handshaking) {
        if (now - connection.acceptedAt >= helloTimeoutMs)
          connection.close('helloTimeout', `no Hello and Welcome within ${helloTimeoutMs} ms`);
      } else if (now - connection.heardAt >= idleTimeoutMs)
        connection.close('idleTimeout', `nothing heard for ${idleTimeoutMs} ms`);
    }
  }

  /**
   * Stops accepting (a new connection is closed `goingAway`), waits up to `drainGraceMs` for every
   * request in flight to be answered, then closes every session `goingAway`: the client knows to
   * reconnect elsewhere, and the layer above hears each close (and tells bound Actors).
   */
  async drain(): Promise<void> {
    this.accepting = false;
    const deadline = Date.now() + this.config.options.drainGraceMs;
    while (Date.now() < deadline && this.someAwaiting()) await new Promise((r) => setTimeout(r, 20));
    for (const connection of this.connections.values())
      if (connection.open) connection.close('goingAway', 'the server is shutting down');
  }

  private someAwaiting(): boolean {
    for (const connection of this.connections.values())
      if (connection.open && connection.awaiting > 0) return true;
    return false;
  }

  /** Closes every connection (`goingAway`, told to the layer above) and the socket. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.accepting = false;
    for (const connection of this.connections.values()) {
      if (connection.open) connection.close('goingAway', 'the server is shutting down');
    }
    // What the last turn queued (the Close frames) is written before the socket goes.
    this.flush();
    await new Promise((r) => setTimeout(r, 10));
    this.closed = true;
    clearInterval(this.sweepTimer);
    clearTimeout(this.retryTimer);
    this.socket.close();
    await this.loop;
    this.connections.clear();
  }

  snapshot(): SessionListenerSnapshot {
    let sessions = 0;
    let handshaking = 0;
    let heldBytes = 0;
    for (const connection of this.connections.values()) {
      if (!connection.open) continue;
      if (connection.handshaking) handshaking++;
      else sessions++;
      heldBytes += connection.heldBytes;
    }
    return {
      listener: this.config.options.listener,
      endpoint: this.endpoint,
      sessions,
      handshaking,
      accepting: this.accepting,
      heldBytes,
      peakConnectionBytes: this.peakConnectionBytes,
      framesIn: this.framesIn,
      framesOut: this.framesOut,
    };
  }
}
