import { ZLinkError, configurationError } from '../core/errors.js';
import {
  SESSION_PROTOCOL_VERSION,
  SessionCloseCode,
  type SessionCloseReason,
  SessionFrameKind,
  closeReasonOf,
  packr,
} from '../core/session-wire/index.js';
import { type KeptFrame, ResumeLedger } from './resume-ledger.js';
import { type SessionTransport, type SessionTransportOpener, unref } from './session-transport.js';

/**
 * The session protocol of a client (docs/sessions-wire.md), whatever carries its frames: Hello and
 * Welcome, one result per request, one-way sends, pushes, heartbeats, close reasons, reconnect and
 * resume after a drop. The Node entry (`session-client.ts`) and the browser one (`browser.ts`) each
 * make their client class from it with their own event emitter and their own transports
 * (`session-transport.ts`). No Node built-in and no Buffer here: this runs in browsers.
 */

/** What a session client does besides where it connects. */
export interface SessionClientSettings {
  /** Sent in the Hello (any msgpack value): what `@OnSessionOpen` checks. @default none */
  readonly token?: unknown;
  /** Deadline of a request, in ms. @default 10000 */
  readonly requestTimeoutMs?: number;
  /**
   * Open a new session after the connection is lost or closed by the server (not after `close()`, a
   * refusal or an unsupported version), after `initialMs` doubling up to `maxMs`, with jitter. With
   * `resume`, a lost connection is resumed first (at this pace); a new session follows only when the
   * resumable one ends. @default off
   */
  readonly reconnect?: { readonly initialMs?: number; readonly maxMs?: number } | false;
  /**
   * Ask for resume after a drop (docs/sessions.md#resume-in-the-client): a connection lost without a
   * Close leaves the session waiting on the server for its grace; the client connects again (at
   * `reconnect`'s pace, or from 100 ms doubling up to 5 s) and gets the same session back, with its
   * requests in flight answered once and the pushes sent meanwhile. Events `dropped` and `resumed`.
   * @default false
   */
  readonly resume?: boolean;
  /**
   * A session to resume at the first `connect()`: an earlier client's `resumeState` (a page saved it
   * in `sessionStorage` before a reload). Implies `resume`. @default none
   */
  readonly resumeFrom?: SessionResumeState;
}

/** The server's Welcome: the session id and the limits it announced. */
export interface SessionWelcome {
  readonly sessionId: string;
  readonly heartbeatMs: number;
  readonly maxFrameBytes: number;
  readonly maxInFlight: number;
  /** Present when the session can be resumed after a drop: the server's grace, in ms. */
  readonly resumeGraceMs?: number;
}

/**
 * Why a session of this client ended, and who ended it (`by`):
 * - `client`: this client's `close(reason, detail)`; `reason`, `code` and `detail` are what it sent;
 * - `server`: a Close frame from the server; its reason (`lost` for a code this version does not know);
 *   `resumeRefused` when a resume was refused;
 * - `connection`: no Close — the connection dropped, or nothing was heard for 3 heartbeats (`lost`),
 *   or the server's framing was broken (`protocolError`), or a resumable session was not resumed
 *   within its grace (`resumeExpired`); `code` is then `undefined`.
 */
export interface SessionClientClose {
  readonly reason: SessionCloseReason | 'lost';
  readonly code: number | undefined;
  readonly detail: string;
  readonly by: 'client' | 'server' | 'connection';
}

/** A resumable session's connection was lost: what is known of why, and how long it may be resumed. */
export interface SessionClientDrop {
  readonly detail: string;
  readonly graceMs: number;
}

/**
 * What resumes a session from another client object (a page reloaded): `client.resumeState`, given
 * back as the option `resumeFrom`. The token is worth the session: keep it where only this player's
 * page reads it (`sessionStorage`), never in a log.
 */
export interface SessionResumeState {
  readonly sessionId: string;
  readonly token: string;
  /** Replies, Errors and Pushes received so far. */
  readonly received: number;
  /** The correlation of the next request (requests still running on the server keep theirs). */
  readonly nextCorrelation: number;
  /** Until when (ms since the epoch) the session may still be resumed, as this client counts it. */
  readonly until: number;
}

/**
 * A session client (docs/sessions.md#the-node-client). Events: `open` (SessionWelcome) for every new
 * session, `close` (SessionClientClose) once for every session or attempt that ends, `push` (packet,
 * msg) for every Push, `reconnecting` (delayMs) when a new attempt is due (after a `close`, or after a
 * `dropped`), `dropped` (SessionClientDrop) when a resumable session lost its connection, `resumed`
 * (SessionWelcome) when it got it back.
 */
export interface SessionClientMethods {
  /** The current session's id (`undefined` while there is none; kept while it is away, resuming). */
  readonly sessionId: string | undefined;
  /** Whether a session is open (welcomed on a live connection, not ended). */
  readonly isOpen: boolean;
  /**
   * What resumes the current session from another client (option `resumeFrom`), while it can be
   * resumed; `undefined` otherwise. Read it when it is to be used (a page's `pagehide`): the count in
   * it must be at least what this client acknowledged.
   */
  readonly resumeState: SessionResumeState | undefined;
  /**
   * Connects and says Hello; resolves with the Welcome. Rejects `Unavailable` when the connection
   * fails or closes first (the Close's reason in `details.reason`: `refused`, say). With `resumeFrom`,
   * resumes that session: resolves once resumed (tries again within its grace), rejects with
   * `resumeRefused` or `resumeExpired`.
   */
  connect(): Promise<SessionWelcome>;
  /**
   * One request; resolves with the reply's payload. Rejects `RemoteError` with the server's code
   * (`remote.code`: `NoHandler`, `HandlerError`, `Unavailable`, ...), `Timeout` after the deadline,
   * `Unavailable` when the session ends first or while it is away (resuming), `InvalidArgument` when
   * no session is open. A request in flight when a resumable session drops stays waiting: it gets its
   * one result after the resume.
   */
  request<T = unknown>(packet: string, msg?: unknown, opts?: { timeoutMs?: number }): Promise<T>;
  /** A one-way message; `false` when no session is open or it is away (nothing sent). */
  send(packet: string, msg?: unknown): boolean;
  /**
   * Sends a Close and ends the session; no reconnect. Resolves once the connection is closed; the
   * `close` event then reports this reason and detail, `by: 'client'` (unless the server's Close or the
   * connection's end came first). A session that is away ends here at once (the server ends it when
   * its grace passes).
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
  /** Its frame, kept for a resume until the server is known to have taken it. */
  readonly kept: KeptFrame | undefined;
}

/** Reasons after which a new session would be refused the same way: no reconnect. */
const FINAL: ReadonlySet<string> = new Set([
  'refused',
  'unsupportedVersion',
  'protocolError',
  'frameTooLarge',
]);

/** The largest correlation; the counter wraps to 1 after it. */
const MAX_CORRELATION = 0xffffffff;

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
    /** The current session's resume bookkeeping, while it can be resumed (its Welcome had a token). */
    private ledger: ResumeLedger | undefined;
    /** While a resumable session has no connection: when this side stops trying (its grace). */
    private away: { readonly until: number; readonly timer: Timer } | undefined;
    private ackQueued = false;

    constructor(private readonly options: O) {
      super();
      this.openTransport = transportOf(options);
      const from = resumeSettings(options);
      if (from) {
        this.ledger = new ResumeLedger(
          from.sessionId,
          from.token,
          Math.max(0, from.until - Date.now()),
          from.received,
        );
        this.nextCorrelation = from.nextCorrelation;
      }
    }

    get sessionId(): string | undefined {
      return this.welcome?.sessionId ?? this.ledger?.sessionId;
    }

    get isOpen(): boolean {
      return this.welcome !== undefined;
    }

    get resumeState(): SessionResumeState | undefined {
      const l = this.ledger;
      if (!l) return undefined;
      return {
        sessionId: l.sessionId,
        token: l.token,
        received: l.received,
        nextCorrelation: this.nextCorrelation,
        until: this.away?.until ?? Date.now() + l.graceMs,
      };
    }

    connect(): Promise<SessionWelcome> {
      this.closing = false;
      return new Promise((resolve, reject) => {
        this.opening = { resolve, reject };
        // Away after a drop: the resume under way settles it.
        if (this.away) return;
        // A session given by `resumeFrom` is away from the start: this connection resumes it.
        const l = this.ledger;
        if (l && !this.away && !this.welcome) {
          if (l.graceMs <= 0) return this.expire();
          this.leave(l.graceMs);
        }
        this.open();
      });
    }

    /** One attempt: a new connection; what an older one still reports is ignored. */
    private open(): void {
      this.ended = undefined;
      this.sentClose = undefined;
      this.ledger?.connectionLost();
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
              this.lost(this.sentClose ?? { reason: 'lost', code: undefined, detail, by: 'connection' });
            closed();
          },
        });
      } catch (error) {
        closed();
        return this.lost({
          reason: 'lost',
          code: undefined,
          detail: String((error as Error)?.message ?? error),
          by: 'connection',
        });
      }
      this.transport = transport;
    }

    /**
     * The Hello of an attempt: a resume of the session that is away (its id, its token, the count of
     * what it received), else a new session — resumable (`[]`) when `resume` is on.
     */
    private hello(): unknown[] {
      const token = this.options.token ?? null;
      if (this.ledger)
        return [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, token, this.ledger.resumeAsk()];
      if (this.options.resume) return [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, token, []];
      return [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, token];
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
          this.counted();
          return this.settle(v[1] as number, (w) => w.resolve(v[2]));
        case SessionFrameKind.Error:
          this.counted();
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
          this.counted();
          this.emit('push', v[1] as string, v[2]);
          return;
        case SessionFrameKind.Ping:
          return this.write([SessionFrameKind.Pong]);
        case SessionFrameKind.Pong:
          this.ledger?.ponged();
          return;
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
      const [token, graceMs, received] = [v[6], v[7], v[8]];
      const resumable = typeof token === 'string' && typeof graceMs === 'number' && graceMs > 0;
      const w: SessionWelcome = {
        sessionId: v[2] as string,
        heartbeatMs: v[3] as number,
        maxFrameBytes: v[4] as number,
        maxInFlight: v[5] as number,
        ...(resumable && { resumeGraceMs: graceMs }),
      };
      if (this.ledger) return this.resumed(w, resumable ? token : undefined, received);
      if (this.options.resume && resumable) this.ledger = new ResumeLedger(w.sessionId, token, graceMs);
      this.welcome = w;
      this.attempt = 0;
      this.startHeartbeat(w.heartbeatMs);
      this.opening?.resolve(w);
      this.opening = undefined;
      this.emit('open', w);
    }

    /**
     * The Welcome of a resume (docs/sessions-wire.md#resuming): the same session, a new token, and the
     * server's count of this client's frames. Those it never got go again, in order, before anything
     * new; the answers and pushes it held come behind this Welcome.
     */
    private resumed(w: SessionWelcome, token: string | undefined, received: unknown): void {
      const l = this.ledger as ResumeLedger;
      const again =
        w.sessionId === l.sessionId && token !== undefined && typeof received === 'number'
          ? l.resumed(received, token, w.resumeGraceMs as number, (f) =>
              f.correlation === undefined ? true : this.waiting.has(f.correlation),
            )
          : undefined;
      if (again === undefined)
        return this.end({
          reason: 'protocolError',
          code: undefined,
          detail: `server Welcome: not a resume of session ${l.sessionId} (${JSON.stringify([w.sessionId, received])})`,
          by: 'connection',
        });
      clearTimeout(this.away?.timer);
      this.away = undefined;
      this.welcome = w;
      this.attempt = 0;
      this.startHeartbeat(w.heartbeatMs);
      for (const f of again) (this.transport as SessionTransport).send(f.body);
      if (l.pingDue) this.ping();
      this.opening?.resolve(w);
      this.opening = undefined;
      this.emit('resumed', w);
    }

    /** A Reply, Error or Push arrived: counted, and acknowledged once this read is done. */
    private counted(): void {
      if (!this.ledger || !this.welcome) return;
      this.ledger.received++;
      if (this.ackQueued) return;
      this.ackQueued = true;
      queueMicrotask(() => {
        this.ackQueued = false;
        this.ack();
      });
    }

    /** An Ack of what was received, if the server has not heard that count yet. */
    private ack(): void {
      const count = this.welcome ? this.ledger?.ackDue() : undefined;
      if (count !== undefined) this.write([SessionFrameKind.Ack, count]);
    }

    private settle(correlation: number, how: (w: Waiting) => void): void {
      const w = this.waiting.get(correlation);
      if (!w) return;
      this.waiting.delete(correlation);
      clearTimeout(w.timer);
      if (w.kept) this.ledger?.answered(w.kept);
      how(w);
    }

    request<T = unknown>(packet: string, msg?: unknown, opts: { timeoutMs?: number } = {}): Promise<T> {
      if (!this.welcome)
        return Promise.reject(
          this.away
            ? new ZLinkError(
                'Unavailable',
                `request ${packet}: the connection dropped; the session is resuming`,
              )
            : new ZLinkError('InvalidArgument', `request ${packet}: no session is open`),
        );
      const correlation = this.nextCorrelation;
      this.nextCorrelation = correlation >= MAX_CORRELATION ? 1 : correlation + 1;
      const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs ?? 10000;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          if (this.waiting.delete(correlation))
            reject(new ZLinkError('Timeout', `request ${packet}: no reply within ${timeoutMs} ms`));
        }, timeoutMs);
        const kept = this.business([SessionFrameKind.Request, correlation, packet, msg ?? null], correlation);
        this.waiting.set(correlation, {
          resolve: resolve as (v: unknown) => void,
          reject,
          timer,
          packet,
          kept,
        });
      });
    }

    send(packet: string, msg?: unknown): boolean {
      if (!this.welcome) return false;
      this.business([SessionFrameKind.Send, packet, msg ?? null], undefined);
      return true;
    }

    async close(reason: SessionCloseReason = 'normal', detail = ''): Promise<void> {
      this.closing = true;
      clearTimeout(this.retryTimer);
      const transport = this.transport;
      const close: SessionClientClose = { reason, code: SessionCloseCode[reason], detail, by: 'client' };
      if (!transport) {
        if (this.away) this.end(close);
        return;
      }
      this.sentClose = close;
      this.write([SessionFrameKind.Close, close.code, detail]);
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

    /**
     * A Request or Send: written, and on a resumable session kept (its own copy: the codec reuses its
     * buffer) until the server is known to have taken it; a Ping follows when enough was kept since the
     * last one, so that what is kept stays bounded (docs/sessions.md#resume-in-the-client).
     */
    private business(items: unknown[], correlation: number | undefined): KeptFrame | undefined {
      if (!this.transport) return undefined;
      const body = packr.pack(items);
      const kept = this.ledger?.keep(body.slice(), correlation);
      this.sentAt = Date.now();
      this.transport.send(body);
      if (this.ledger?.pingDue) this.ping();
      return kept;
    }

    /** A Ping, behind an Ack of what was received (docs/sessions-wire.md#counting-and-acks). */
    private ping(): void {
      this.ack();
      this.write([SessionFrameKind.Ping]);
      this.ledger?.pinged();
    }

    private startHeartbeat(heartbeatMs: number): void {
      clearInterval(this.heartbeat);
      this.heardAt = Date.now();
      this.heartbeat = setInterval(
        () => {
          const now = Date.now();
          if (now - this.heardAt > 3 * heartbeatMs)
            return this.lost({
              reason: 'lost',
              code: undefined,
              detail: `nothing heard for ${3 * heartbeatMs} ms`,
              by: 'connection',
            });
          // A client that only sends hears nothing back: its Pings are what keeps the line proven.
          if (now - this.sentAt >= heartbeatMs / 2 || now - this.heardAt >= heartbeatMs) this.ping();
        },
        Math.max(50, heartbeatMs / 2),
      );
      unref(this.heartbeat);
    }

    /**
     * The connection ended without a Close from the server (or after this client's own). A resumable
     * session is then away: it keeps its requests waiting and tries to resume within its grace (one
     * `dropped`, a `reconnecting` before each attempt); any other session ends.
     */
    private lost(close: SessionClientClose): void {
      const l = this.ledger;
      if (!l || this.closing || this.sentClose) return this.end(close);
      this.disconnect();
      if (!this.away) {
        this.leave(l.graceMs);
        this.emit('dropped', { detail: close.detail, graceMs: l.graceMs } satisfies SessionClientDrop);
      }
      this.retry();
    }

    /** The session is away for at most `graceMs` more, as this side counts it. */
    private leave(graceMs: number): void {
      const timer = setTimeout(() => this.expire(), graceMs);
      this.away = { until: Date.now() + graceMs, timer };
    }

    private expire(): void {
      this.end({
        reason: 'resumeExpired',
        code: undefined,
        detail: `not resumed within ${this.ledger?.graceMs ?? 0} ms`,
        by: 'connection',
      });
    }

    /** Drops the current connection, if any, and what belongs to it. */
    private disconnect(): void {
      clearInterval(this.heartbeat);
      const transport = this.transport;
      this.transport = undefined;
      transport?.close(false);
      this.welcome = undefined;
    }

    /** The next attempt, after a delay that doubles with each attempt not welcomed (with jitter). */
    private retry(): void {
      const again = this.options.reconnect || {};
      const base = Math.min(again.maxMs ?? 5000, (again.initialMs ?? 100) * 2 ** this.attempt++);
      const delay = Math.round(base / 2 + Math.random() * (base / 2));
      this.emit('reconnecting', delay);
      this.retryTimer = setTimeout(() => {
        if (!this.closing) this.open();
      }, delay);
    }

    /** The one end of a session: every waiting request fails, `close` is told, a reconnect may follow. */
    private end(close: SessionClientClose): void {
      if (this.ended) return;
      this.ended = close;
      clearTimeout(this.away?.timer);
      clearTimeout(this.retryTimer);
      this.away = undefined;
      this.ledger = undefined;
      this.disconnect();
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
      if (this.closing || !this.options.reconnect || FINAL.has(close.reason)) return;
      this.retry();
    }
  }
  return ZLinkSessionClient as unknown as new (options: O) => E & SessionClientMethods;
}

/**
 * `resume` and `resumeFrom`, checked when the client is made (`Configuration` naming the field); the
 * state to resume from, if any.
 */
function resumeSettings(options: SessionClientSettings): SessionResumeState | undefined {
  if (options.resume !== undefined && typeof options.resume !== 'boolean')
    throw configurationError('resume', `must be a boolean, got ${JSON.stringify(options.resume)}`);
  const from = options.resumeFrom as Partial<Record<keyof SessionResumeState, unknown>> | undefined;
  if (from === undefined) return undefined;
  const count = (n: unknown, min: number, max: number): boolean =>
    Number.isInteger(n) && (n as number) >= min && (n as number) <= max;
  if (
    typeof from !== 'object' ||
    from === null ||
    typeof from.sessionId !== 'string' ||
    from.sessionId === '' ||
    typeof from.token !== 'string' ||
    from.token === '' ||
    !count(from.received, 0, Number.MAX_SAFE_INTEGER) ||
    !count(from.nextCorrelation, 1, MAX_CORRELATION) ||
    typeof from.until !== 'number' ||
    Number.isNaN(from.until)
  )
    throw configurationError(
      'resumeFrom',
      'must be a resumeState as a client gave it ({ sessionId, token, received, nextCorrelation, until })',
    );
  return from as SessionResumeState;
}
