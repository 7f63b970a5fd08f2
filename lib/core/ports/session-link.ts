import type { RemoteAddress } from '../kinds.js';
import type { SessionCloseReason } from '../session-wire/index.js';
import type { SessionResumeAsk, WelcomeResume } from '../wire/session-frames.js';

/**
 * The SessionLink port: one end-user connection on a session listener, as the layers above the
 * transport see it (the session runtime, the object layer's bindings) without importing zeromq. The
 * listener (`lib/transport/session`, under each socket's listener) implements it and owns the wire:
 * framing, the Hello, heartbeats, the exactly-one answer per request and the close. Everything here
 * is synchronous and never throws.
 */
export interface SessionLink {
  /** The listener's name (the key under `sessions`). */
  readonly listener: string;
  /**
   * The client's address: the TCP peer, or behind a trusted proxy the client it names
   * (docs/sessions.md#the-clients-address). Known before `opened`, and never changes after it.
   */
  readonly remoteAddress: RemoteAddress;
  /** Set once welcomed: the id the client was told (unique to this node run). */
  readonly sessionId: string | undefined;
  /** Whether the connection is still open (welcomed or waiting for its answer to the Hello). */
  readonly open: boolean;
  /** Requests the client sent that have no answer yet. */
  readonly awaiting: number;
  /**
   * Admits the session: the client gets its Welcome with `sessionId`. Once; after `opened` only. With
   * `resume` the Welcome carries its terms and the link is resumable: lost without a Close frame, or
   * silent for `idleTimeoutMs`, it ends with no Close frame and is told as a drop
   * (docs/sessions-wire.md#resume-after-a-drop).
   */
  welcome(sessionId: string, resume?: SessionResumeTerms): void;
  /**
   * Answers request `correlation` with a payload (its msgpack bytes). Returns `false`, nothing sent,
   * when the request was answered already or the session has closed: each request gets exactly one
   * answer, whichever comes first.
   */
  reply(correlation: number, payload: Uint8Array): boolean;
  /**
   * Answers request `correlation` with an error (a ZLink or handler code, a message, and the details
   * the failure carried, if any: bounded by `toWireError`); as `reply`.
   */
  error(correlation: number, code: string, message: string, details?: unknown): boolean;
  /**
   * Sends the client a Push. `false` when the session has closed. A client that reads too slowly is
   * closed (`slowConsumer`) rather than let its pushes pile up.
   */
  push(packet: string, payload: Uint8Array): boolean;
  /** Sends a Close with `reason` and closes the connection; later calls do nothing. */
  close(reason: SessionCloseReason, detail?: string): void;
  /**
   * Ends the connection without a Close frame (the client is gone, or came back on another
   * connection); told to the handler as a drop when the link is resumable. Later calls do nothing.
   */
  drop(reason: SessionCloseReason, detail: string): void;
}

/** What a resumable session's Welcome says, and what its new connection takes over. */
export interface SessionResumeTerms extends WelcomeResume {
  /** The Welcome resumes a session the client had (told as `resumed`, not `opened`). */
  readonly resumed: boolean;
  /**
   * Correlations of requests taken on an earlier connection that this one may still answer (each
   * once): the ones without an answer yet and the ones whose answer is sent again.
   */
  readonly awaiting: Iterable<number>;
}

/** What a session listener tells the layer above, per connection; every call runs on its receive turn. */
export interface SessionLinkHandler {
  /**
   * A client sent a valid Hello. The handler answers with `link.welcome(id)` or `link.close(...)`, now
   * or later (within the listener's `helloTimeoutMs`, or the connection is closed `helloTimeout`). A
   * client waits for its Welcome: any frame but a Ping or a Close before it is a `protocolError`.
   */
  opened(link: SessionLink, token: unknown, resume?: SessionResumeAsk): void;
  /** A request of a welcomed session; it must end in one `reply` or `error` (or the session's close). */
  request(link: SessionLink, correlation: number, packet: string, payload: Uint8Array): void;
  /** A one-way message of a welcomed session. */
  send(link: SessionLink, packet: string, payload: Uint8Array): void;
  /**
   * The connection ended, after `opened` (welcomed or not): by the client, by `close`, by a fault
   * of its input, by its silence, or by the listener closing. Once per link. `dropped` when a
   * resumable link ended without a Close frame either way (lost, silent, or `drop`): the client may
   * resume the session on another connection.
   */
  closed(link: SessionLink, reason: SessionCloseReason, detail: string, dropped: boolean): void;
  /** A resumable session's client has received `received` of its Replies, Errors and Pushes (an Ack). */
  acked?(link: SessionLink, received: number): void;
}
