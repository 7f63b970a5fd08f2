import { packr } from '../session-wire/index.js';
import type { ObjectKind } from '../kinds.js';

/**
 * What every wire record shares: the msgpack codec, the version, the record kinds and the checks the
 * decoders use on a peer's values. ClientServer records are in `wire.ts`, RouteMesh records in
 * `mesh-records.ts`; one `decodeFrame` reads both.
 */
export const WIRE_VERSION = 1;

export const RecordKind = {
  Hello: 1,
  Welcome: 2,
  State: 3,
  /** ClientServer liveness, either way (a MeshNode has its own, 23): see transport/liveness/silence.ts. */
  Ping: 4,
  Send: 10,
  Request: 11,
  Reply: 12,
  ErrorReply: 13,
  MeshHello: 20,
  MeshWelcome: 21,
  MeshState: 22,
  MeshPing: 23,
  MeshSend: 24,
  MeshRequest: 25,
  /** A MeshRequest that carries its reply route: the answer goes to `origin`, not the previous hop. */
  MeshRoutedRequest: 27,
  FanoutEvent: 30,
  FanoutBeacon: 31,
  // Reserved for the object layer (docs/protocol.md#record-kinds; docs/decisions.md). A MeshNode reads
  // them only for its object layer: see RESERVED_KINDS.
  SessionRelocationSeal: 42,
  SessionRelocationSealReply: 43,
  SessionRelocationRoute: 44,
  /** A Session owner asks an Actor's owner to bind a session to it; answered by 62 or 63. */
  SessionBind: 45,
  /** An Actor's owner to a Session owner: a Push for one bound session (one-way). */
  SessionPush: 46,
  /** A binding's tombstone, to the owner that held it (a rebind moved it elsewhere); answered by 62 or 63. */
  SessionUnbind: 47,
  /**
   * An Actor's owner to a Session owner: the incarnation a binding was made to is destroyed, the binding
   * ended with it (one-way). A record of its own, never a Push: no packet an Actor sends can mean it, and
   * a Session owner of a version without it drops it (an unknown kind, counted) instead of passing it on.
   */
  SessionBindingEnded: 48,
  /**
   * A Spot's owner to a Session owner: one Push for several sessions bound to the Spot's members (one-way;
   * docs/protocol.md#room-pushes). Its own kind: a Session owner without it drops it whole, counted.
   */
  SessionRoomPush: 49,
  MessageFollow: 50,
  ObjectSend: 60,
  ObjectRequest: 61,
  ObjectReply: 62,
  ObjectErrorReply: 63,
  /** Asks a node to create, get-or-create or destroy one object; answered by 62 or 63. */
  ObjectControl: 64,
  /** An owner's answer to a one-way send on a route that is not its current one. */
  ObjectStale: 65,
  /** One chunk of a moving object's image, source to target (docs/decisions.md "Relocation records"). */
  RelocationChunk: 66,
  /** The target's answer to a move's image: restored and relaying may start, or refused (a reason). */
  RelocationReady: 67,
  /** A call the source holds or receives for a moving object, relayed to the target's temporary queue. */
  RelocationRelay: 68,
  /** The end of a move, target to source: committed (the target's route) or aborted (the reason). */
  RelocationCommit: 69,
  /** Source to target: the hold is relayed, take the authority (go) — or the move is off (a reason). */
  RelocationCutover: 70,
  /** A draining object server to each peer: drop my routes; answer 72 once you have. */
  OwnerLeaving: 71,
  /** A peer's answer to 71: everything it sent the leaving node before this has been sent. */
  OwnerLeft: 72,
  /** One Logical Multicast event for the Spots of one node subscribed to its (channel, topic). */
  SpotEvent: 73,
  /** A moving Spot's owner to each peer: answer 75 once you have read everything I sent before this. */
  TopicBarrier: 74,
  /** A peer's answer to 74: everything it sent before this has been sent. */
  TopicBarrierAck: 75,
} as const;

/**
 * Kinds whose number is taken but which this version cannot read. A record of one is dropped and
 * counted like any unknown kind (never handed to a channel handler: an object message must not
 * reach code written for channel records); its reason names it, so a mixed-version mesh says why.
 */
export const RESERVED_KINDS: ReadonlyMap<number, string> = new Map(
  (
    [
      'SessionRelocationSeal',
      'SessionRelocationSealReply',
      'SessionRelocationRoute',
      'SessionBind',
      'SessionPush',
      'SessionUnbind',
      'SessionBindingEnded',
      'SessionRoomPush',
      'MessageFollow',
      'ObjectSend',
      'ObjectRequest',
      'ObjectReply',
      'ObjectErrorReply',
      'ObjectControl',
      'ObjectStale',
      'RelocationChunk',
      'RelocationReady',
      'RelocationRelay',
      'RelocationCommit',
      'RelocationCutover',
      'OwnerLeaving',
      'OwnerLeft',
      'SpotEvent',
      'TopicBarrier',
      'TopicBarrierAck',
    ] as const
  ).map((name) => [RecordKind[name], name]),
);

/** The malformed record for a kind no reader here takes. */
export function unreadableKind(kind: unknown): MalformedRecord {
  const reserved = typeof kind === 'number' ? RESERVED_KINDS.get(kind) : undefined;
  return reserved === undefined
    ? { reason: `unknown record kind ${describeValue(kind)}` }
    : { reason: `record kind ${kind as number} (${reserved}) is reserved; this version does not read it` };
}

// The one msgpack codec of every record and payload lives in the session-wire room, which a browser's
// session client imports without Node built-ins: every side packs with the same settings.
export { packr };

/** A record that could not be read. `correlation` is set when it was a request whose id was legible. */
export interface MalformedRecord {
  readonly reason: string;
  readonly correlation?: number;
}

export const isStr = (v: unknown): v is string => typeof v === 'string';
export const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;
export const isCorrelation = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
export const isRevision = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
/** A name a record or stored record must have (NodeRid, id, type): a non-empty string. */
export const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
/** A generation or other counter: a non-negative safe integer. */
export const isCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
export const isObjectKind = (v: unknown): v is ObjectKind => v === 'spot' || v === 'actor';
/** Metadata travels as nil when there is none. */
export const isMetadata = (v: unknown): v is Uint8Array | null => v === null || isBytes(v);

/** Names a peer's value in a reason without running any of its code (`String()` would call its toString). */
export function describeValue(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined
    ? String(value)
    : typeof value === 'string'
      ? JSON.stringify(value.slice(0, 32))
      : typeof value;
}

/** msgpackr writes integers past 32 bits as float64: records with such correlations are left to it. */
export const MAX_UINT32 = 0xffffffff;

/**
 * Names (packets, channels) as msgpackr encodes them, once per name; starts over if names are made up without
 * end.
 */
const strCache = new Map<string, Uint8Array>();
const STR_CACHE_LIMIT = 1024;

/** The msgpack bytes of a name, for records written by hand. */
export function strBytes(name: string): Uint8Array {
  let bytes = strCache.get(name);
  if (bytes === undefined) {
    if (strCache.size >= STR_CACHE_LIMIT) strCache.clear();
    // A copy: msgpackr's result is a view into its shared write buffer.
    bytes = new Uint8Array(packr.pack(name));
    strCache.set(name, bytes);
  }
  return bytes;
}
