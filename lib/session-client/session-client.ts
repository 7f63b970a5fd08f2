import { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';
import { type Socket, connect as tcpConnect } from 'node:net';
import { ZLinkError } from '../core/errors.js';
import {
  FrameSplitter,
  SESSION_PROTOCOL_VERSION,
  SessionCloseCode,
  type SessionCloseReason,
  SessionFrameKind,
  closeReasonOf,
  frame,
  packr,
} from '../core/wire/index.js';
import { type SessionAddress, sessionAddress } from './session-address.js';

/**
 * A small client of the session wire (docs/sessions-wire.md) for Node: a test harness, a bot, a load
 * generator, or a game client written in TypeScript. It opens one TCP connection, says Hello, and
 * gives requests (one result each), one-way sends and pushes; with `reconnect` it opens a new session
 * after a lost connection, waiting longer each time. Uses `node:net` and msgpack only (no zeromq).
 * Where it connects: `endpoint`, the listener's endpoint as `runtime.sessions.endpoint()` gives it
 * (`tcp://host:port`), or `host` and `port`.
 */
export type SessionClientOptions = SessionAddress & SessionClientSettings;

/** What a session client does besides where it connects (see `SessionClientOptions`). */
export interface SessionClientSettings {
  /** Sent in the Hello (any msgpack value): what `@OnSessionOpen` checks. @default none */
  readonly token?: unknown;
  /** Deadline of a request, in ms. @default 10000 */
  readonly requestTimeoutMs?: number;
  /**
   * Open a new session after the connection is lost or closed by the server (not after `close()`, a
   * refusal or an unsupported version), after `initialMs` doubling up to `maxMs`, with jitter.
   * @default off
   */
  readonly reconnect?: { readonly initialMs?: number; readonly maxMs?: number } | false;
}

/** The server's Welcome: the session id and the limits it announced. */
export interface SessionWelcome {
  readonly sessionId: string;
  readonly heartbeatMs: number;
  readonly maxFrameBytes: number;
  readonly maxInFlight: number;
}

/**
 * Why a session of this client ended, and who ended it (`by`):
 * - `client`: this client's `close(reason, detail)`; `reason`, `code` and `detail` are what it sent;
 * - `server`: a Close frame from the server; its reason (`lost` for a code this version does not know);
 * - `connection`: no Close — the connection dropped, or nothing was heard for 3 heartbeats (`lost`),
 *   or the server's framing was broken (`protocolError`); `code` is then `undefined`.
 */
export interface SessionClientClose {
  readonly reason: SessionCloseReason | 'lost';
  readonly code: number | undefined;
  readonly detail: string;
  readonly by: 'client' | 'server' | 'connection';
}

interface Waiting {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: ZLinkError) => void;
  readonly timer: NodeJS.Timeout;
  readonly packet: string;
}

/** Reasons after which a new session would be refused the same way: no reconnect. */
const FINAL: ReadonlySet<string> = new Set([
  'refused',
  'unsupportedVersion',
  'protocolError',
  'frameTooLarge',
]);

/**
 * Events (docs/sessions.md#the-node-client): `open` (SessionWelcome) for every session, `close`
 * (SessionClientClose) once for every session or attempt that ends, `push` (packet, msg) for every Push,
 * `reconnecting` (delayMs) after a `close` when a new attempt is due.
 */
export class ZLinkSessionClient extends EventEmitter {
  private readonly address: { readonly host: string; readonly port: number };
  private socket: Socket | undefined;
  private splitter = new FrameSplitter(16 * 1024 * 1024);
  private waiting = new Map<number, Waiting>();
  private nextCorrelation = 1;
  private welcome: SessionWelcome | undefined;
  private opening: { resolve: (w: SessionWelcome) => void; reject: (e: ZLinkError) => void } | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private sentAt = 0;
  private heardAt = 0;
  private closing = false;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private ended: SessionClientClose | undefined;
  /** The Close this client sent (`close()`): what its `close` event reports when the socket closes. */
  private sentClose: SessionClientClose | undefined;

  /** Throws `Configuration` (naming the field) for a malformed `endpoint`, or a bad `host` or `port`. */
  constructor(private readonly options: SessionClientOptions) {
    super();
    this.address = sessionAddress(options);
  }

  /** The current session's id (`undefined` while not open). */
  get sessionId(): string | undefined {
    return this.welcome?.sessionId;
  }

  get isOpen(): boolean {
    return this.welcome !== undefined;
  }

  /**
   * Connects and says Hello; resolves with the Welcome. Rejects `Unavailable` when the connection
   * fails or closes first (the Close's reason in `details.reason`: `refused`, say).
   */
  connect(): Promise<SessionWelcome> {
    this.closing = false;
    return new Promise((resolve, reject) => {
      this.opening = { resolve, reject };
      this.open();
    });
  }

  private open(): void {
    this.splitter = new FrameSplitter(16 * 1024 * 1024);
    this.ended = undefined;
    this.sentClose = undefined;
    this.outFrames = [];
    const socket = tcpConnect(this.address);
    socket.setNoDelay(true);
    this.socket = socket;
    socket.on('connect', () =>
      this.write([SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, this.options.token ?? null]),
    );
    socket.on('data', (chunk: Buffer) => {
      this.heardAt = Date.now();
      const fault = this.splitter.push(chunk, (body) => {
        this.frame(packr.unpack(body) as unknown[]);
        return true;
      });
      if (fault)
        this.end({
          reason: 'protocolError',
          code: undefined,
          detail: `server framing: ${fault}`,
          by: 'connection',
        });
    });
    socket.on('error', () => undefined);
    socket.on('close', () =>
      this.end(
        this.sentClose ?? {
          reason: 'lost',
          code: undefined,
          detail: 'the connection closed',
          by: 'connection',
        },
      ),
    );
  }

  private frame(v: unknown[]): void {
    switch (v[0]) {
      case SessionFrameKind.Welcome: {
        const w: SessionWelcome = {
          sessionId: v[2] as string,
          heartbeatMs: v[3] as number,
          maxFrameBytes: v[4] as number,
          maxInFlight: v[5] as number,
        };
        this.welcome = w;
        this.attempt = 0;
        this.startHeartbeat(w.heartbeatMs);
        this.opening?.resolve(w);
        this.opening = undefined;
        this.emit('open', w);
        return;
      }
      case SessionFrameKind.Reply:
        return this.settle(v[1] as number, (w) => w.resolve(v[2]));
      case SessionFrameKind.Error:
        return this.settle(v[1] as number, (w) =>
          w.reject(
            new ZLinkError('RemoteError', `request ${w.packet}: ${String(v[2])}: ${String(v[3])}`, {
              remote:
                v[4] === undefined
                  ? { code: String(v[2]), message: String(v[3]) }
                  : { code: String(v[2]), message: String(v[3]), details: v[4] },
              details: v[4],
            }),
          ),
        );
      case SessionFrameKind.Push:
        this.emit('push', v[1] as string, v[2]);
        return;
      case SessionFrameKind.Ping:
        return this.write([SessionFrameKind.Pong]);
      case SessionFrameKind.Close: {
        const code = v[1] as number;
        return this.end({
          reason: closeReasonOf(code) ?? 'lost',
          code,
          detail: String(v[2] ?? ''),
          by: 'server',
        });
      }
    }
  }

  private settle(correlation: number, how: (w: Waiting) => void): void {
    const w = this.waiting.get(correlation);
    if (!w) return;
    this.waiting.delete(correlation);
    clearTimeout(w.timer);
    how(w);
  }

  /**
   * One request; resolves with the reply's payload. Rejects `RemoteError` with the server's code
   * (`remote.code`: `NoHandler`, `HandlerError`, `Unavailable`, ...), `Timeout` after the deadline,
   * `Unavailable` when the session ends first, `InvalidArgument` when no session is open.
   */
  request<T = unknown>(packet: string, msg?: unknown, opts: { timeoutMs?: number } = {}): Promise<T> {
    if (!this.welcome)
      return Promise.reject(new ZLinkError('InvalidArgument', `request ${packet}: no session is open`));
    const correlation = this.nextCorrelation;
    this.nextCorrelation = correlation >= 0xffffffff ? 1 : correlation + 1;
    const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs ?? 10000;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.waiting.delete(correlation))
          reject(new ZLinkError('Timeout', `request ${packet}: no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(correlation, { resolve: resolve as (v: unknown) => void, reject, timer, packet });
      this.write([SessionFrameKind.Request, correlation, packet, msg ?? null]);
    });
  }

  /** A one-way message; `false` when no session is open (nothing sent). */
  send(packet: string, msg?: unknown): boolean {
    if (!this.welcome) return false;
    this.write([SessionFrameKind.Send, packet, msg ?? null]);
    return true;
  }

  /**
   * Sends a Close and ends the session; no reconnect. Resolves once the connection is closed; the
   * `close` event then reports this reason and detail, `by: 'client'` (unless the server's Close or the
   * connection's end came first).
   */
  async close(reason: SessionCloseReason = 'normal', detail = ''): Promise<void> {
    this.closing = true;
    clearTimeout(this.retryTimer);
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    const code = SessionCloseCode[reason];
    this.sentClose = { reason, code, detail, by: 'client' };
    this.write([SessionFrameKind.Close, code, detail]);
    this.flushWrites();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.end();
    setTimeout(() => socket.destroy(), 1000).unref();
    await closed;
  }

  /**
   * Queues one frame; the frames of a turn leave in one socket write (`flushWrites`), not a syscall
   * and a TCP segment each: a burst of requests reaches the server as a few reads.
   */
  private write(items: unknown[]): void {
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    this.outFrames.push(frame(packr.pack(items)));
    if (this.outFrames.length === 1) queueMicrotask(this.flushWrites);
  }

  private outFrames: Buffer[] = [];

  private readonly flushWrites = (): void => {
    const out = this.outFrames;
    if (out.length === 0) return;
    this.outFrames = [];
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    this.sentAt = Date.now();
    socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
  };

  private startHeartbeat(heartbeatMs: number): void {
    clearInterval(this.heartbeat);
    this.heardAt = Date.now();
    this.heartbeat = setInterval(
      () => {
        const now = Date.now();
        if (now - this.heardAt > 3 * heartbeatMs)
          return this.end({
            reason: 'lost',
            code: undefined,
            detail: `nothing heard for ${3 * heartbeatMs} ms`,
            by: 'connection',
          });
        if (now - this.sentAt >= heartbeatMs / 2) this.write([SessionFrameKind.Ping]);
      },
      Math.max(50, heartbeatMs / 2),
    );
    this.heartbeat.unref();
  }

  /** The one end of a session: every waiting request fails, `close` is told, a reconnect may follow. */
  private end(close: SessionClientClose): void {
    if (this.ended) return;
    this.ended = close;
    clearInterval(this.heartbeat);
    this.socket?.destroy();
    this.welcome = undefined;
    for (const [, w] of this.waiting) {
      clearTimeout(w.timer);
      w.reject(new ZLinkError('Unavailable', `request ${w.packet}: the session ended (${close.reason})`));
    }
    this.waiting.clear();
    if (this.opening) {
      this.opening.reject(
        new ZLinkError('Unavailable', `no session: ${close.reason} ${close.detail}`, { details: close }),
      );
      this.opening = undefined;
    }
    this.emit('close', close);
    const again = this.options.reconnect;
    if (this.closing || !again || FINAL.has(close.reason)) return;
    const base = Math.min(again.maxMs ?? 5000, (again.initialMs ?? 100) * 2 ** this.attempt++);
    const delay = Math.round(base / 2 + Math.random() * (base / 2));
    this.emit('reconnecting', delay);
    this.retryTimer = setTimeout(() => {
      if (!this.closing) this.open();
    }, delay);
  }
}
