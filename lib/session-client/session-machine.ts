import { ZLinkError } from '../core/errors.js';
import {
  SESSION_PROTOCOL_VERSION,
  SessionCloseCode,
  type SessionCloseReason,
  SessionFrameKind,
  closeReasonOf,
  packr,
} from '../core/session-wire/index.js';
import { type SessionTransport, type SessionTransportOpener, unref } from './session-transport.js';

/**
 * The session protocol of a client (docs/sessions-wire.md), whatever carries its frames: Hello and
 * Welcome, one result per request, one-way sends, pushes, heartbeats, close reasons and reconnect. The
 * Node entry (`session-client.ts`) and the browser one (`browser.ts`) each make their client class from
 * it with their own event emitter and their own transports (`session-transport.ts`). No Node built-in
 * and no Buffer here: this runs in browsers.
 */

/** What a session client does besides where it connects. */
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

/**
 * A session client (docs/sessions.md#the-node-client). Events: `open` (SessionWelcome) for every
 * session, `close` (SessionClientClose) once for every session or attempt that ends, `push` (packet,
 * msg) for every Push, `reconnecting` (delayMs) after a `close` when a new attempt is due.
 */
export interface SessionClientMethods {
  /** The current session's id (`undefined` while not open). */
  readonly sessionId: string | undefined;
  /** Whether a session is open (welcomed and not ended). */
  readonly isOpen: boolean;
  /**
   * Connects and says Hello; resolves with the Welcome. Rejects `Unavailable` when the connection
   * fails or closes first (the Close's reason in `details.reason`: `refused`, say).
   */
  connect(): Promise<SessionWelcome>;
  /**
   * One request; resolves with the reply's payload. Rejects `RemoteError` with the server's code
   * (`remote.code`: `NoHandler`, `HandlerError`, `Unavailable`, ...), `Timeout` after the deadline,
   * `Unavailable` when the session ends first, `InvalidArgument` when no session is open.
   */
  request<T = unknown>(packet: string, msg?: unknown, opts?: { timeoutMs?: number }): Promise<T>;
  /** A one-way message; `false` when no session is open (nothing sent). */
  send(packet: string, msg?: unknown): boolean;
  /**
   * Sends a Close and ends the session; no reconnect. Resolves once the connection is closed; the
   * `close` event then reports this reason and detail, `by: 'client'` (unless the server's Close or the
   * connection's end came first).
   */
  close(reason?: SessionCloseReason, detail?: string): Promise<void>;
}

/** What a client class extends: an event emitter (Node's `EventEmitter`, or the browser entry's own). */
export interface SessionEventEmitter {
  emit(event: string, ...args: unknown[]): boolean;
}

type Timer = ReturnType<typeof setTimeout>;

interface Waiting {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: ZLinkError) => void;
  readonly timer: Timer;
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
 * The client class of an entry: `Base` is its event emitter, `transportOf` reads the options (throwing
 * `Configuration`, naming the field, for a bad endpoint) and gives what opens each connection.
 */
export function sessionClientClass<E extends SessionEventEmitter, O extends SessionClientSettings>(
  Base: new () => E,
  transportOf: (options: O) => SessionTransportOpener,
): new (options: O) => E & SessionClientMethods {
  class ZLinkSessionClient extends (Base as new () => SessionEventEmitter) implements SessionClientMethods {
    private readonly openTransport: SessionTransportOpener;
    private transport: SessionTransport | undefined;
    /** Settles when the current connection has closed (what `close()` waits for). */
    private whenClosed: Promise<void> = Promise.resolve();
    private waiting = new Map<number, Waiting>();
    private nextCorrelation = 1;
    private welcome: SessionWelcome | undefined;
    private opening: { resolve: (w: SessionWelcome) => void; reject: (e: ZLinkError) => void } | undefined;
    private heartbeat: Timer | undefined;
    private sentAt = 0;
    private heardAt = 0;
    private closing = false;
    private attempt = 0;
    private retryTimer: Timer | undefined;
    private ended: SessionClientClose | undefined;
    /** The Close this client sent (`close()`): what its `close` event reports when the connection closes. */
    private sentClose: SessionClientClose | undefined;

    constructor(private readonly options: O) {
      super();
      this.openTransport = transportOf(options);
    }

    get sessionId(): string | undefined {
      return this.welcome?.sessionId;
    }

    get isOpen(): boolean {
      return this.welcome !== undefined;
    }

    connect(): Promise<SessionWelcome> {
      this.closing = false;
      return new Promise((resolve, reject) => {
        this.opening = { resolve, reject };
        this.open();
      });
    }

    /** One attempt: a new connection; what an older one still reports is ignored. */
    private open(): void {
      this.ended = undefined;
      this.sentClose = undefined;
      let closed!: () => void;
      this.whenClosed = new Promise((resolve) => (closed = resolve));
      const current = () => this.transport !== undefined && this.transport === transport;
      let transport: SessionTransport | undefined;
      try {
        transport = this.openTransport({
          opened: () => {
            if (current()) this.write(this.hello());
          },
          body: (body) => {
            if (current()) this.read(body);
          },
          fault: (detail) => {
            if (current())
              this.end({
                reason: 'protocolError',
                code: undefined,
                detail: `server framing: ${detail}`,
                by: 'connection',
              });
          },
          closed: (detail) => {
            if (current())
              this.end(this.sentClose ?? { reason: 'lost', code: undefined, detail, by: 'connection' });
            closed();
          },
        });
      } catch (error) {
        closed();
        return this.end({
          reason: 'lost',
          code: undefined,
          detail: String((error as Error)?.message ?? error),
          by: 'connection',
        });
      }
      this.transport = transport;
    }

    /**
     * The Hello of the next attempt. Resume after a drop (issue 53) slots in here: the resume token a
     * Welcome gives (read in `welcomed`) is kept and goes in the next attempt's Hello, so the server
     * hands back the same session; until the wire carries one, every attempt is a new session.
     */
    private hello(): unknown[] {
      return [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, this.options.token ?? null];
    }

    /** One frame body from the server: a msgpack array whose first item is its kind. */
    private read(body: Uint8Array): void {
      this.heardAt = Date.now();
      let items: unknown;
      try {
        items = packr.unpack(body);
      } catch (error) {
        return this.end({
          reason: 'protocolError',
          code: undefined,
          detail: `server frame: malformed msgpack (${(error as Error).message})`,
          by: 'connection',
        });
      }
      if (!Array.isArray(items))
        return this.end({
          reason: 'protocolError',
          code: undefined,
          detail: 'server frame: not a msgpack array',
          by: 'connection',
        });
      this.frame(items);
    }

    private frame(v: unknown[]): void {
      switch (v[0]) {
        case SessionFrameKind.Welcome:
          return this.welcomed(v);
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

    private welcomed(v: unknown[]): void {
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
    }

    private settle(correlation: number, how: (w: Waiting) => void): void {
      const w = this.waiting.get(correlation);
      if (!w) return;
      this.waiting.delete(correlation);
      clearTimeout(w.timer);
      how(w);
    }

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

    send(packet: string, msg?: unknown): boolean {
      if (!this.welcome) return false;
      this.write([SessionFrameKind.Send, packet, msg ?? null]);
      return true;
    }

    async close(reason: SessionCloseReason = 'normal', detail = ''): Promise<void> {
      this.closing = true;
      clearTimeout(this.retryTimer);
      const transport = this.transport;
      if (!transport) return;
      const code = SessionCloseCode[reason];
      this.sentClose = { reason, code, detail, by: 'client' };
      this.write([SessionFrameKind.Close, code, detail]);
      const closed = this.whenClosed;
      transport.close(true);
      await closed;
    }

    /** One frame to the transport, which frames it (a byte stream also gathers a turn's frames in one write). */
    private write(items: unknown[]): void {
      if (!this.transport) return;
      this.sentAt = Date.now();
      this.transport.send(packr.pack(items));
    }

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
      unref(this.heartbeat);
    }

    /** The one end of a session: every waiting request fails, `close` is told, a reconnect may follow. */
    private end(close: SessionClientClose): void {
      if (this.ended) return;
      this.ended = close;
      clearInterval(this.heartbeat);
      const transport = this.transport;
      this.transport = undefined;
      transport?.close(false);
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
  return ZLinkSessionClient as unknown as new (options: O) => E & SessionClientMethods;
}
