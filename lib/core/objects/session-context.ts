import type { RemoteAddress } from '../kinds.js';
import type { MessageKind } from '../calls/handlers.js';
import type { ZLinkMetadata } from '../wire/metadata.js';
import type { SessionCloseReason } from '../session-wire/index.js';
import type { ActorRef } from './object-context.js';

/**
 * What session code sees (docs/architecture.md#sessions): one end-user connection on a session listener,
 * owned by the node that accepted it, and the context of the handlers that node runs for it.
 */

/**
 * Why a session ended, as `@OnSessionClose` hears it; the Close frame's reason names (docs/sessions-wire.md).
 */
export type { SessionCloseReason } from '../session-wire/index.js';

/** One end-user session, on the node that owns its connection (the Session owner). */
export interface ZLinkSession {
  /** The id the client was told in its Welcome; unique among this node run's sessions. */
  readonly id: string;
  /** The listener's name (the key under `sessions`). */
  readonly listener: string;
  /**
   * The client's address, `{ address, port, family }` (docs/sessions.md#the-clients-address): the TCP
   * peer, or, on a listener entry that reads one from trusted proxies, the client a PROXY header or
   * `X-Forwarded-For` names. Known from `@OnSessionOpen` on (ban an address there by returning `false`).
   */
  readonly remoteAddress: RemoteAddress;
  /**
   * Whether the session is still open: true too while its client is away after a drop, for the
   * listener's `resumeGraceMs` (docs/sessions.md#resume-after-a-drop).
   */
  readonly open: boolean;
  /** Whether the client is connected: open and not away after a drop. */
  readonly connected: boolean;
  /**
   * The application's own values for this session (a user id after login, say): kept on the Session
   * owner only, never sent anywhere, gone with the session.
   */
  readonly data: Record<string, unknown>;
  /**
   * Sends the client a Push (`msg` as msgpack). Returns `false` when the session is closed; never
   * throws for that. A client that reads too slowly is closed (`slowConsumer`). While a resumable
   * session's client is away, the push waits for its resume (within `maxPendingBytes`).
   */
  push(packet: string, msg: unknown): boolean;
  /** Closes the session: the client gets a Close with `reason`, `@OnSessionClose` runs once. */
  close(reason?: SessionCloseReason, detail?: string): void;
  /**
   * The Actors bound to this session, in the order they were bound; the first takes the client's
   * frames that no `@SessionHandler` takes (requests answered with the Actor's reply).
   */
  readonly actors: readonly string[];
  /**
   * Binds the session to the Actor incarnation `actor` names (as `createActor` / `getOrCreate` returned
   * it), on the owner the ref names, without reading any store: its owner checks the incarnation and
   * its lease and answers with the route it holds the Actor on, which this node stores. From then on
   * the session's messages reach the Actor over that route, the Actor's `ctx.push` reaches the client,
   * and the Actor hears the session's end. A bind of an Actor id bound already replaces that binding
   * (the old owner drops it first). Ends `InvalidOperation` (the ref is not the current incarnation),
   * `Unavailable` (the owner does not hold it, it is moving, or is not reachable: bind again with a
   * fresh ref), `Rejected` (its owner is fenced), `Timeout`, `Shutdown` or `Unavailable` once the
   * session has closed.
   */
  bind(actor: ActorRef, options?: { readonly timeoutMs?: number }): Promise<void>;
  /**
   * Sends `msg` to a bound Actor (the primary unless `options.actor` names another) over its stored
   * route, as an ordinary `@ActorHandler` call with this session in its context. A request (the
   * default) resolves with the Actor's reply; a send once it is queued. When the stored route is no
   * longer the Actor's, the call follows it once (the Actor moved) or ends `Unavailable` — it is never
   * looked up again and resent. `NotFound` when no Actor is bound (or not that one).
   */
  relay(packet: string, msg: unknown, options?: ZLinkRelayOptions): Promise<unknown>;
}

export interface ZLinkRelayOptions {
  /** The bound Actor's id. @default the primary (the first bound) */
  readonly actor?: string;
  /** @default 'request' */
  readonly kind?: 'request' | 'send';
  /** @default the runtime's requestTimeoutMs */
  readonly timeoutMs?: number;
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
