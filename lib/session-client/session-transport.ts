/**
 * The seam between the session protocol (`session-machine.ts`: Hello and Welcome, correlations,
 * pushes, heartbeats, close reasons, reconnect) and what carries its frame bodies
 * (docs/sessions-wire.md#framing). A byte stream (tcp, tls) writes each body after its 4-byte length;
 * a WebSocket sends each body as one binary message, with no prefix. The protocol sees whole bodies
 * only, whichever it is.
 */

/** One connection to a session listener, as the protocol drives it. */
export interface SessionTransport {
  /**
   * Queues one frame body. The bytes are the caller's only during the call (the msgpack codec reuses
   * its buffer): a transport that keeps them copies them. Nothing is sent once the transport closes.
   */
  send(body: Uint8Array): void;
  /**
   * Closes the connection: `graceful`, after what was queued (waiting `GRACEFUL_CLOSE_MS` at most);
   * otherwise at once. `closed` follows either way.
   */
  close(graceful: boolean): void;
}

/** What a transport tells the protocol. Never called before the opener returns. */
export interface SessionTransportEvents {
  /** The connection is up: the Hello goes first. */
  opened(): void;
  /** One whole frame body, in the order the server sent them. */
  body(body: Uint8Array): void;
  /**
   * The server's bytes cannot be read as frames (a byte stream's broken length prefix, a WebSocket text
   * message): nothing after this is delivered; the session ends `protocolError`.
   */
  fault(detail: string): void;
  /** The connection closed, once, whatever closed it (an attempt that never opened too): what is known of why. */
  closed(detail: string): void;
}

/** Opens one connection to the endpoint it was made for. */
export type SessionTransportOpener = (events: SessionTransportEvents) => SessionTransport;

/**
 * The largest frame body this client accepts from a server (a longer one is a `frameTooLarge` fault).
 * A server announces its own limit for what clients send (the Welcome's `maxFrameBytes`); this one only
 * bounds what a broken or hostile server can make the client hold.
 */
export const CLIENT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** How long a graceful close waits for the queued frames to leave before it drops the connection. */
export const GRACEFUL_CLOSE_MS = 1000;

/** Node keeps a process alive for a timer unless it is unref'd; a browser's timers have no such thing. */
export function unref(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}
