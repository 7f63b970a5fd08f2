import type { SessionCloseReason } from '../session-wire/index.js';

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
  /** Where the client connects from, when the listener's socket tells it (not the STREAM socket). */
  readonly remoteAddress?: SessionRemoteAddress;
  /** Set once welcomed: the id the client was told (unique to this node run). */
  readonly sessionId: string | undefined;
  /** Whether the connection is still open (welcomed or waiting for its answer to the Hello). */
  readonly open: boolean;
  /** Requests the client sent that have no answer yet. */
  readonly awaiting: number;
  /** Admits the session: the client gets its Welcome with `sessionId`. Once; after `opened` only. */
  welcome(sessionId: string): void;
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
}

/** A client's address, as its TCP connection shows it. */
export interface SessionRemoteAddress {
  readonly address: string;
  readonly port: number;
  /** `'IPv4'` or `'IPv6'`. */
  readonly family: string;
}

/** What a session listener tells the layer above, per connection; every call runs on its receive turn. */
export interface SessionLinkHandler {
  /**
   * A client sent a valid Hello. The handler answers with `link.welcome(id)` or `link.close(...)`, now
   * or later (within the listener's `helloTimeoutMs`, or the connection is closed `helloTimeout`). A
   * client waits for its Welcome: any frame but a Ping or a Close before it is a `protocolError`.
   */
  opened(link: SessionLink, token: unknown): void;
  /** A request of a welcomed session; it must end in one `reply` or `error` (or the session's close). */
  request(link: SessionLink, correlation: number, packet: string, payload: Uint8Array): void;
  /** A one-way message of a welcomed session. */
  send(link: SessionLink, packet: string, payload: Uint8Array): void;
  /**
   * The connection ended, after `opened` (welcomed or not): by the client, by `close`, by a fault
   * of its input, by its silence, or by the listener closing. Once per link.
   */
  closed(link: SessionLink, reason: SessionCloseReason, detail: string): void;
}
