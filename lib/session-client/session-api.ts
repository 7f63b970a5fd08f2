import { configurationError } from '../core/errors.js';
import type { SessionCloseReason } from '../core/session-wire/index.js';

/**
 * What a session client's user sees (docs/sessions.md#the-node-client): its settings, what it reports,
 * its methods. Both entries (`session-client.ts` for Node, `browser.ts`) share them; the protocol is
 * `session-machine.ts`. No Node built-in here: this runs in browsers.
 */

/** The largest correlation; the counter wraps to 1 after it. */
export const MAX_CORRELATION = 0xffffffff;

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

/**
 * `resume` and `resumeFrom`, checked when the client is made (`Configuration` naming the field); the
 * state to resume from, if any.
 */
export function resumeSettings(options: SessionClientSettings): SessionResumeState | undefined {
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
