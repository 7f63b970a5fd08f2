import type { MessageKind } from '../calls/handlers.js';
import type { ZLinkMetadata } from '../wire/metadata.js';
import type { SessionCloseReason } from '../wire/session-frames.js';

/**
 * What session code sees (DESIGN §7 "Sessions"): one end-user connection on a session listener,
 * owned by the node that accepted it, and the context of the handlers that node runs for it.
 */

/** Why a session ended, as `@OnSessionClose` hears it; the Close frame's reason names (docs/sessions-wire.md). */
export type { SessionCloseReason } from '../wire/session-frames.js';

/** One end-user session, on the node that owns its connection (the Session owner). */
export interface ZLinkSession {
  /** The id the client was told in its Welcome; unique among this node run's sessions. */
  readonly id: string;
  /** The listener's name (the key under `sessions`). */
  readonly listener: string;
  /**
   * The client's address. `undefined` today: zeromq.js 6 does not expose a STREAM connection's peer
   * address (libzmq's `Peer-Address` message property), and a guess could name the wrong client.
   */
  readonly remoteAddress: string | undefined;
  /** Whether the session is still open. */
  readonly open: boolean;
  /**
   * The application's own values for this session (a user id after login, say): kept on the Session
   * owner only, never sent anywhere, gone with the session.
   */
  readonly data: Record<string, unknown>;
  /**
   * Sends the client a Push (`msg` as msgpack). Returns `false` when the session is closed; never
   * throws for that. A client that reads too slowly is closed (`slowConsumer`).
   */
  push(packet: string, msg: unknown): boolean;
  /** Closes the session: the client gets a Close with `reason`, `@OnSessionClose` runs once. */
  close(reason?: SessionCloseReason, detail?: string): void;
}

/** What a `@SessionHandler` learns about the message besides its payload. */
export interface ZLinkSessionContext {
  /** The kind of target the handler serves: always `'session'` here. */
  readonly target: 'session';
  readonly listener: string;
  readonly kind: MessageKind;
  readonly packet: string;
  /** The client's correlation of a request; `undefined` for a one-way send. */
  readonly correlation: number | undefined;
  /** Always empty: the session wire carries no metadata (the context keeps the shape of the others). */
  readonly metadata: ZLinkMetadata;
  readonly session: ZLinkSession;
}

/** What `@OnSessionOpen` gets besides the session: the client's Hello. */
export interface ZLinkSessionHello {
  /** The Hello's token as the client sent it (any msgpack value; `undefined` when it sent none). */
  readonly token: unknown;
}
