import { ZLinkError } from '../core/errors.js';
import {
  SESSION_PROTOCOL_VERSION,
  SessionCloseCode,
  type SessionCloseReason,
  SessionFrameKind,
  packr,
} from '../core/session-wire/index.js';
import { PendingRequests } from './pending-requests.js';
import { type KeptFrame, ResumeLedger } from './resume-ledger.js';
import {
  MAX_CORRELATION,
  type SessionClientClose,
  type SessionClientDrop,
  type SessionClientMethods,
  type SessionClientSettings,
  type SessionEventEmitter,
  type SessionResumeState,
  type SessionWelcome,
  resumeSettings,
} from './session-api.js';
import { connectionEnd, readServerFrame, readWelcome, serverClose } from './server-frames.js';
import { type SessionTransport, type SessionTransportOpener, unref } from './session-transport.js';

/**
 * The session protocol of a client (docs/sessions-wire.md), whatever carries its frames: Hello and
 * Welcome, one result per request, one-way sends, pushes, heartbeats, close reasons, reconnect and
 * resume after a drop. The Node entry (`session-client.ts`) and the browser one (`browser.ts`) each
 * make their client class from it with their own event emitter and their own transports
 * (`session-transport.ts`). No Node built-in and no Buffer here: this runs in browsers.
 */

type Timer = ReturnType<typeof setTimeout>;

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
    private readonly pending = new PendingRequests();
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
        this.ledger = ResumeLedger.from(from);
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
      return this.ledger?.state(this.nextCorrelation, this.away?.until);
    }

    connect(): Promise<SessionWelcome> {
      this.closing = false;
      return new Promise((resolve, reject) => {
        this.opening = { resolve, reject };
        // Away after a drop, the resume under way settles it; a session given by `resumeFrom` is
        // away from the start, and this connection resumes it.
        if (this.away) return;
        const l = this.ledger;
        if (l && !this.welcome) {
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
            if (current()) this.end(connectionEnd('protocolError', `server framing: ${detail}`));
          },
          closed: (detail) => {
            if (current()) this.lost(this.sentClose ?? connectionEnd('lost', detail));
            closed();
          },
        });
      } catch (error) {
        closed();
        return this.lost(connectionEnd('lost', String((error as Error)?.message ?? error)));
      }
      this.transport = transport;
    }

    /**
     * The Hello of an attempt: a resume of the session that is away (its id, its token, the count of
     * what it received), else a new session — resumable (`[]`) when `resume` is on.
     */
    private hello(): unknown[] {
      const hello = [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, this.options.token ?? null];
      if (this.ledger) return [...hello, this.ledger.resumeAsk()];
      return this.options.resume ? [...hello, []] : hello;
    }

    /** One frame body from the server: a msgpack array whose first item is its kind. */
    private read(body: Uint8Array): void {
      this.heardAt = Date.now();
      const items = readServerFrame(body);
      if (typeof items === 'string') return this.end(connectionEnd('protocolError', items));
      this.frame(items);
    }

    private frame(v: unknown[]): void {
      switch (v[0]) {
        case SessionFrameKind.Welcome:
          return this.welcomed(v);
        case SessionFrameKind.Reply:
        case SessionFrameKind.Error: {
          this.counted();
          const kept = this.pending.settle(v);
          if (kept) this.ledger?.answered(kept);
          return;
        }
        case SessionFrameKind.Push:
          this.counted();
          this.emit('push', v[1] as string, v[2]);
          return;
        case SessionFrameKind.Ping:
          return this.write([SessionFrameKind.Pong]);
        case SessionFrameKind.Pong:
          this.ledger?.ponged();
          return;
        case SessionFrameKind.Close:
          return this.end(serverClose(v));
      }
    }

    private welcomed(v: unknown[]): void {
      const { welcome: w, resume } = readWelcome(v);
      if (this.ledger) return this.resumed(w, resume?.token, resume?.received);
      if (this.options.resume && resume)
        this.ledger = new ResumeLedger(w.sessionId, resume.token, resume.graceMs);
      this.live(w, 'open');
    }

    /** The session is (back) on this connection: heartbeats start, `connect()` settles, `event` is told. */
    private live(w: SessionWelcome, event: 'open' | 'resumed'): void {
      this.welcome = w;
      this.attempt = 0;
      this.startHeartbeat(w.heartbeatMs);
      this.opening?.resolve(w);
      this.opening = undefined;
      this.emit(event, w);
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
              f.correlation === undefined ? true : this.pending.has(f.correlation),
            )
          : undefined;
      if (again === undefined)
        return this.end(
          connectionEnd(
            'protocolError',
            `server Welcome: not a resume of session ${l.sessionId} (${JSON.stringify([w.sessionId, received])})`,
          ),
        );
      clearTimeout(this.away?.timer);
      this.away = undefined;
      for (const f of again) (this.transport as SessionTransport).send(f.body);
      if (l.pingDue) this.ping();
      this.live(w, 'resumed');
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

    request<T = unknown>(packet: string, msg?: unknown, opts: { timeoutMs?: number } = {}): Promise<T> {
      if (!this.welcome)
        return Promise.reject(
          this.away
            ? new ZLinkError('Unavailable', `request ${packet}: the session is away, resuming`)
            : new ZLinkError('InvalidArgument', `request ${packet}: no session is open`),
        );
      const correlation = this.nextCorrelation;
      this.nextCorrelation = correlation >= MAX_CORRELATION ? 1 : correlation + 1;
      const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs ?? 10000;
      const kept = this.business([SessionFrameKind.Request, correlation, packet, msg ?? null], correlation);
      return this.pending.wait<T>(correlation, packet, timeoutMs, kept);
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
            return this.lost(connectionEnd('lost', `nothing heard for ${3 * heartbeatMs} ms`));
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
      if (this.away) return this.retry();
      this.leave(l.graceMs);
      this.emit('dropped', { detail: close.detail, graceMs: l.graceMs } satisfies SessionClientDrop);
      this.retry(true); // the first try at once (docs/sessions-wire.md#what-counts-as-a-drop)
    }

    /** The session is away for at most `graceMs` more, as this side counts it. */
    private leave(graceMs: number): void {
      const timer = setTimeout(() => this.expire(), graceMs);
      this.away = { until: Date.now() + graceMs, timer };
    }

    private expire(): void {
      this.end(connectionEnd('resumeExpired', `not resumed within ${this.ledger?.graceMs ?? 0} ms`));
    }

    /** Drops the current connection, if any, and what belongs to it. */
    private disconnect(): void {
      clearInterval(this.heartbeat);
      const transport = this.transport;
      this.transport = undefined;
      transport?.close(false);
      this.welcome = undefined;
    }

    /** The next attempt: `now`, or after a delay that doubles with each attempt not welcomed (with jitter). */
    private retry(now = false): void {
      const again = this.options.reconnect || {};
      const base = now ? 0 : Math.min(again.maxMs ?? 5000, (again.initialMs ?? 100) * 2 ** this.attempt++);
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
      this.pending.failAll(close.reason);
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
