import type { MeshMembership, MulticastTopic } from '../wire/mesh-records.js';
import type { ObjectRole } from '../kinds.js';

/*
 * The public shapes of `ZLinkRuntime.snapshot()` that the transport fills in. Declared here, not
 * inferred from the transport's classes, so the published `.d.ts` names no transport internals and a
 * transport change that alters what users see fails to compile instead of changing the API quietly.
 */

/** One ClientServer Client connection: where it goes, where it came from, what the server confirmed. */
export interface ClientConnectionSnapshot {
  readonly endpoint: string;
  readonly source: 'manual' | 'discovered';
  /** Handshake done: a candidate, unless its weight is 0 or it drains. */
  readonly ready: boolean;
  /** Connected and answering, but with an identity discovery does not list (yet). */
  readonly unconfirmed: boolean;
  /** From the server's welcome; `undefined` until it arrived. */
  readonly serverRid: string | undefined;
  readonly generation: string | undefined;
  readonly weight: number | undefined;
  readonly draining: boolean | undefined;
  readonly revision: number | undefined;
  /** Records waiting in the connection's source-local send queue. */
  readonly queued: number;
}

/** One outbound link of a MeshNode, to an endpoint (manual or discovered). */
export interface MeshLinkSnapshot {
  readonly endpoint: string;
  readonly status: string;
  readonly peerRid?: string;
}

/** One ready peer of a MeshNode. */
export interface MeshPeerSnapshot {
  readonly rid: string;
  readonly generation: string;
  readonly objectRole: ObjectRole;
  readonly memberships: readonly MeshMembership[];
  readonly revision: number;
  /** `outbound`: over our link to its endpoint; `inbound`: over the link it made to us. */
  readonly via: 'outbound' | 'inbound';
  /**
   * The Logical Multicast (channel, topic) pairs its Spots subscribe to, as it advertised them; absent when
   * none.
   */
  readonly topics?: readonly MulticastTopic[];
}

/** The select-one state of one ChannelName on a MeshNode. */
export interface MeshChannelSnapshot {
  readonly channel: string;
  readonly role: 'server' | 'client';
  readonly weight?: number;
  readonly draining?: boolean;
  readonly candidates: number;
  readonly members: number;
}

/** One MeshNode: its one listener, its links and peers, and the select-one state of its channels. */
export interface MeshSnapshot {
  readonly mesh: string;
  readonly rid: string;
  readonly generation: string;
  readonly endpoint: string;
  /** Sockets the node owns: always one ROUTER, however many channels it registers. */
  readonly sockets: 1;
  /** Live zeromq connections of that ROUTER, inbound and outbound. */
  readonly connections: number;
  readonly links: readonly MeshLinkSnapshot[];
  readonly peers: readonly MeshPeerSnapshot[];
  readonly channels: readonly MeshChannelSnapshot[];
  readonly revision: number;
  readonly activeHandlers: number;
  readonly queued: number;
}

/** One fanout subscriber link, to one publisher endpoint. */
export interface FanoutLinkSnapshot {
  readonly endpoint: string;
  readonly state: 'connecting' | 'alive' | 'silent';
  /** From the publisher's last beacon; `undefined` until one arrived. */
  readonly rid: string | undefined;
  readonly generation: string | undefined;
  readonly received: number;
  readonly dropped: number;
  /** zeromq matches subscriptions by prefix; a topic that is only a prefix match is not ours. */
  readonly filtered: number;
  /** Events that arrived before the publisher was confirmed, or from the wrong channel. */
  readonly unconfirmed: number;
}

/** One object activation on its owner. */
export interface ObjectActivationSnapshot {
  readonly kind: 'spot' | 'actor';
  readonly type: string;
  readonly id: string;
  readonly objectGeneration: number;
  /** `creating`, `ready` or `closing`. */
  readonly state: string;
  /** Messages waiting in its queue. */
  readonly queued: number;
  /** A turn is running. */
  readonly busy: boolean;
  /** An Actor's Spot (absent when none). */
  readonly spot?: string;
  /** A Spot's member Actors (absent when none). */
  readonly members?: readonly string[];
}

/**
 * Why a WebSocket session listener answered a connection over HTTP instead of upgrading it
 * (docs/sessions-wire.md#upgrade-refusals): a wrong path (404), an Origin not allowed (403), a method
 * other than GET (405), a bad WebSocket handshake (400: Upgrade, Sec-WebSocket-Key or -Version), headers
 * over the bound (431), a plain HTTP request (426), bytes that are no HTTP (400), no upgrade in time
 * (408 or dropped), a failed TLS handshake (dropped).
 */
export type UpgradeRefusal =
  | 'path'
  | 'origin'
  | 'method'
  | 'handshake'
  | 'headersTooLarge'
  | 'forwardedFor'
  | 'notUpgrade'
  | 'malformed'
  | 'timeout'
  | 'tls';

/** A session listener at one moment (`snapshot().sessions`). */
/** One entry of a session listener (`sessions.<name>.listen[i]`): a name with several entries has several. */
export interface SessionListenerSnapshot {
  readonly listener: string;
  /** The entry's kind: `tcp`, `tls` or `websocket`. */
  readonly kind: 'tcp' | 'tls' | 'websocket';
  /** The entry's URL (`tcp://host:port`, `wss://host:port/path`, ...), once bound. */
  readonly endpoint: string | undefined;
  /** Welcomed sessions open now. */
  readonly sessions: number;
  /** Connections still on their Hello or its answer. */
  readonly handshaking: number;
  /** False once a drain began: a new connection is closed `goingAway`. */
  readonly accepting: boolean;
  /**
   * Bytes held for all connections: frames being gathered, writes waiting for slow clients, and what
   * their sockets still hold.
   */
  readonly heldBytes: number;
  /**
   * The most bytes one connection held at once since the bind (its writes waiting and what its socket
   * held): at most `maxPendingBytes` plus one frame.
   */
  readonly peakConnectionBytes: number;
  readonly framesIn: number;
  readonly framesOut: number;
  /**
   * A `tls` entry's failed TLS handshakes (bytes that are no TLS, a plain TCP client, a version under
   * `minVersion`, none finished within `helloTimeoutMs`) and TLS records that could not be read, since
   * the bind. Only on `tls` entries.
   */
  readonly tlsErrors?: number;
  /**
   * Connections whose word about the client was refused, by reason, since the bind
   * (docs/sessions.md#what-is-refused). On a `tcp` or `tls` entry with `proxyProtocol`: `untrusted` (a
   * peer that is no trusted proxy, refused unread), the PROXY header's own reasons (`signature`,
   * `version`, `command`, `family`, `oversize`, `truncated`, `malformed`, `address`) and `timeout` (no
   * whole header within `helloTimeoutMs`). On a `websocket` entry: `untrusted` (an `X-Forwarded-For`
   * from a peer that is no trusted proxy, ignored), `oversize` and `malformed` (a trusted proxy's header
   * refused with its upgrade). Only on entries that read a proxy's word.
   */
  readonly proxyRefusals?: Readonly<Record<string, number>>;
  /**
   * Room push records (a Spot's one Push for several sessions: docs/sessions.md#room-pushes) this node
   * took for the listener's sessions since it started; set by the runtime, not the listener, and the
   * same figure (the name's) on each of a name's entries.
   */
  readonly roomPushRecords?: number;
  /** A WebSocket listener's connections answered over HTTP and closed, by why, since the bind. */
  readonly upgradeRefusals?: Readonly<Record<UpgradeRefusal, number>>;
  /**
   * Resume after a drop (docs/sessions.md#resume-after-a-drop), set by the runtime: sessions whose client
   * is away now (they hold their seat and their output), sessions resumed since the start, and Hellos
   * refused a resume (a wrong, used or expired token, or an unknown session: `resumeRefused`).
   */
  readonly detached?: number;
  readonly resumes?: number;
  readonly resumesRefused?: number;
}
