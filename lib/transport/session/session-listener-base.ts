import type { Buffer } from 'node:buffer';
import type { SessionCloseReason } from '../../core/wire/index.js';
import type { SessionListenerSnapshot, ZLinkEvents } from '../../core/observe/index.js';
import type { SessionLinkHandler } from '../../core/ports/index.js';
import type { NormalizedSessionListen, NormalizedSessionListener } from '../../core/options/index.js';
import { ListenAddress } from '../io/index.js';
import type { ConnectionHost, SessionConnection } from './session-connection.js';
import { SESSION_CLOSE_LINGER_MS, SESSION_TOMBSTONE_MS } from '../timing.js';

/**
 * The sessions open on one listener name, whatever entry they came in on: each of the name's listeners
 * holds the same object, so `maxSessions` counts them together.
 */
export interface SessionCount {
  open: number;
}

/** What every listener of one name shares (one per `sessions.<name>`), whatever entry it serves. */
export interface SessionListenerConfig {
  readonly options: NormalizedSessionListener;
  readonly handler: SessionLinkHandler;
  readonly events: ZLinkEvents;
  readonly count: SessionCount;
}

/** A session listener entry as the runtime drives it, whatever its kind. */
export interface SessionListening {
  /** The entry it serves (`sessions.<name>.listen[i]`). */
  readonly entry: NormalizedSessionListen;
  /**
   * Where clients connect, once bound: a URL of the entry's kind (`tcp://host:port`, `tls://host:port`,
   * `ws://host:port/path`, `wss://host:port/path`) on the advertise host and the bound port.
   */
  readonly endpoint: string | undefined;
  /** Where this machine reaches the listener (loopback for a wildcard bind), once bound, as `endpoint`. */
  readonly localEndpoint: string | undefined;
  /** Binds and starts accepting; rejects when the address cannot be bound. */
  bind(): Promise<void>;
  drain(): Promise<void>;
  close(): Promise<void>;
  snapshot(): SessionListenerSnapshot;
}

/**
 * An entry's URL from the `tcp://host:port` its address gives: the scheme of its kind (with TLS, the
 * secure one), and for a WebSocket its path (docs/sessions.md#where-clients-connect).
 */
export function sessionUrl(entry: NormalizedSessionListen, tcpEndpoint: string): string {
  const hostPort = tcpEndpoint.slice('tcp://'.length);
  if (entry.kind === 'websocket') return `${entry.tls ? 'wss' : 'ws'}://${hostPort}${entry.path}`;
  return `${entry.kind}://${hostPort}`;
}

/**
 * What every session listener does the same whatever its socket: the connections it knows, the
 * `maxSessions` and drain rules at an accept, the events of a session's open and close, the
 * `maxPendingBytes` rule of every write, the turn's batch of writes, the sweep of overdue Hellos and
 * silent sessions, the drain and the snapshot. A listener adds its socket: binding, reading, writing a
 * turn's frames out (`flushConnection`) and ending a connection on the wire (`terminate`).
 */
export abstract class SessionListenerBase<C extends SessionConnection>
  implements ConnectionHost, SessionListening
{
  /** Connections by the listener's key, open and (for a while) closed. */
  protected readonly connections = new Map<string, C>();
  private dirty: C[] = [];
  private flushQueued = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  protected accepting = true;
  /** Set by `close()` once the last Close frames went out: nothing is accepted or written after it. */
  protected closed = false;
  protected readonly address: ListenAddress;
  framesIn = 0;
  framesOut = 0;
  /** The most bytes one connection held at once for writing since the bind (see `write`). */
  peakConnectionBytes = 0;

  constructor(
    protected readonly config: SessionListenerConfig,
    readonly entry: NormalizedSessionListen,
  ) {
    this.address = new ListenAddress(entry.listen);
  }

  get options(): NormalizedSessionListener {
    return this.config.options;
  }

  get handler(): SessionLinkHandler {
    return this.config.handler;
  }

  get endpoint(): string | undefined {
    return this.address.bound ? sessionUrl(this.entry, this.address.endpoint) : undefined;
  }

  get localEndpoint(): string | undefined {
    return this.address.bound ? sessionUrl(this.entry, this.address.local) : undefined;
  }

  abstract bind(): Promise<void>;

  /** Closes every connection (`goingAway`, told to the layer above) and the socket. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.accepting = false;
    this.closeAll();
    // What the last turn queued (the Close frames) is written before the socket goes.
    this.flush();
    await new Promise((r) => setTimeout(r, 10));
    this.closed = true;
    this.stopSweep();
    await this.closeSocket();
    this.connections.clear();
  }

  /** Closes the socket itself, after the last Close frames were handed to it; resolves once closed. */
  protected abstract closeSocket(): Promise<void>;

  /** Hands the connection's queued frames to its socket (once per turn it wrote in). */
  protected abstract flushConnection(connection: C): void;

  /**
   * Ends the connection on the socket: what still waits for it here is dropped. `reason` is the
   * session's, so a `slowConsumer` can be ended harder than a closed session that may read its Close.
   */
  protected abstract terminate(connection: C, reason: SessionCloseReason): void;

  /** Queues `frame` for the connection (counted in `writeBytes` once queued). */
  protected abstract enqueue(connection: C, frame: Buffer): void;

  /** Starts the sweep and tells the listener is bound; the subclass calls it once bound. */
  protected listening(): void {
    const { listener, helloTimeoutMs, idleTimeoutMs } = this.config.options;
    const sweepMs = Math.max(50, Math.min(1000, helloTimeoutMs / 4, idleTimeoutMs / 4));
    this.sweepTimer = setInterval(() => this.sweep(Date.now()), sweepMs);
    this.sweepTimer.unref();
    this.config.events.emit({ type: 'listening', endpoint: this.endpoint as string, session: listener });
  }

  /** Stops the sweep (the listener is closing). */
  protected stopSweep(): void {
    clearInterval(this.sweepTimer);
  }

  /**
   * A new connection under `key`: known from now on, and counted toward `maxSessions` (with every entry
   * of the listener's name) unless the listener is draining (closed `goingAway`) or full (closed `full`).
   */
  protected accepted(key: string, connection: C): void {
    this.connections.set(key, connection);
    const { count } = this.config;
    if (!this.accepting) connection.close('goingAway', 'the server is draining');
    else if (count.open >= this.config.options.maxSessions)
      connection.close('full', `${this.config.options.maxSessions} sessions are open`);
    else {
      connection.counted = true;
      count.open++;
    }
  }

  welcomed(connection: C): void {
    this.config.events.emit({
      type: 'session',
      state: connection.resumed ? 'resumed' : 'opened',
      listener: this.config.options.listener,
      sessionId: connection.sessionId as string,
    });
  }

  write(connection: C, frame: Buffer, limited = true): void {
    // What it held before this frame is checked, not after: one large frame on top of what a reading
    // client has not yet taken must not close that client. So the gateway holds at most the limit
    // plus this one frame.
    if (limited && this.overPending(connection)) return;
    this.enqueue(connection, frame);
    this.framesOut++;
    const held = connection.writeBytes;
    if (held > this.peakConnectionBytes) this.peakConnectionBytes = held;
    this.markDirty(connection);
  }

  /**
   * Closes the session `slowConsumer` (and says so) when the bytes it holds for writing are past
   * `maxPendingBytes`: the rule of every write, including one a socket library makes by itself.
   */
  protected overPending(connection: C): boolean {
    const { maxPendingBytes } = this.config.options;
    if (connection.writeBytes <= maxPendingBytes) return false;
    connection.close('slowConsumer', `more than ${maxPendingBytes} bytes waited`);
    return true;
  }

  /** The connection has something to write this turn: its flush runs once, after the turn. */
  protected markDirty(connection: C): void {
    if (connection.dirty) return;
    connection.dirty = true;
    this.dirty.push(connection);
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => this.flush());
  }

  protected flush(): void {
    this.flushQueued = false;
    const dirty = this.dirty;
    this.dirty = [];
    for (const connection of dirty) {
      connection.dirty = false;
      this.flushConnection(connection);
    }
  }

  ended(connection: C, reason: SessionCloseReason, detail: string, byClient: boolean): void {
    if (connection.counted) this.config.count.open--;
    const { listener } = this.config.options;
    this.config.events.emit({
      type: 'session',
      state: connection.sessionId === undefined ? 'refused' : connection.dropped ? 'dropped' : 'closed',
      listener,
      ...(connection.sessionId !== undefined && { sessionId: connection.sessionId }),
      reason,
      detail,
    });
    connection.closedAt = Date.now();
    if (byClient || reason === 'slowConsumer') return this.terminate(connection, reason);
    setTimeout(() => this.terminate(connection, reason), SESSION_CLOSE_LINGER_MS).unref();
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
      } else if (now - connection.heardAt >= idleTimeoutMs) {
        // A resumable session's client may still be there, behind a connection that died unseen: no
        // Close frame, which would end the session for it (docs/sessions-wire.md#resume-after-a-drop).
        const detail = `nothing heard for ${idleTimeoutMs} ms`;
        if (connection.resumable) connection.drop('idleTimeout', detail);
        else connection.close('idleTimeout', detail);
      }
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
    this.closeAll();
  }

  private someAwaiting(): boolean {
    for (const connection of this.connections.values())
      if (connection.open && connection.awaiting > 0) return true;
    return false;
  }

  /** Closes every open connection `goingAway` (told to the layer above). */
  protected closeAll(): void {
    for (const connection of this.connections.values())
      if (connection.open) connection.close('goingAway', 'the server is shutting down');
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
      kind: this.entry.kind,
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
