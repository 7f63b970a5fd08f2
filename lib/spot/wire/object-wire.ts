import type { WireError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import {
  MAX_FRAME_VALUES,
  RecordKind,
  WIRE_VERSION,
  countMsgpackValues,
  isBytes,
  isCorrelation,
  isCount,
  isMetadata,
  isName,
  isObjectKind,
  isStr,
  msgpackValueEnd,
  packr,
  readFrameworkFields,
  type TraceFields,
} from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import { type ObjectRouteFences, readObjectFences } from './object-fences.js';

export type { ObjectRouteFences } from './object-fences.js';
import { type MessageFollowRecord, decodeMessageFollow } from './object-follow-wire.js';
import { type OwnerLeaveRecord, decodeOwnerLeave } from './owner-leave-wire.js';
import { type SpotEventRecord, decodeSpotEvent } from './spot-event-wire.js';
import { type TopicBarrierRecord, decodeTopicBarrier } from './topic-barrier-wire.js';
import { type SessionRecord, decodeSessionRecord } from './session-wire.js';
import { type SessionRoomPushRecord, decodeSessionRoomPush } from './session-room-push-wire.js';
import { type RelocationChunkRecord, decodeRelocationChunk } from './relocation-wire.js';
import { type RelocationStepRecord, decodeRelocationStep } from './relocation-steps-wire.js';
import {
  type ObjectControlRecord,
  type ObjectStaleRecord,
  decodeObjectControl,
} from './object-control-wire.js';

/**
 * Object messages on the wire (docs/protocol.md#object-records): record kinds 60–63, never framework fields
 * on channel records, so a node that cannot read them drops them (RESERVED_KINDS) instead of handing a Spot
 * payload to a channel handler. Field order (docs/decisions.md):
 *
 *     ObjectSend       [1, 60,                           kind, id, fences, operationId, packet, metadata | nil, payload, trace | nil, hops?, session?, ...later]
 *     ObjectRequest    [1, 61, correlation, originRid, originGeneration, kind, id, fences, operationId, packet, metadata | nil, payload, trace | nil, hops?, session?, ...later]
 *     ObjectReply      [1, 62, correlation, originGeneration, payload, ...later]
 *     ObjectErrorReply [1, 63, correlation, originGeneration, [code, message, details?], ...later]
 *
 *     fences = [ownerRid, ownerNodeGeneration, objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration, ...later]
 *
 * The reply route (origin NodeRid + node generation + correlation) comes right after the kind, as in
 * MeshRoutedRequest, so a relay (Message Follow) forwards the record as it is and the answer goes straight to
 * the origin. A reply echoes the origin's node generation: a reply meant for an earlier run of the origin
 * (whose correlations start over) is refused there, never settling a new call. The fences are one nested
 * array, the form Message Follow's notice names a route by (docs/protocol.md#message-follow). The trace slot
 * is always written (nil without a trace); `hops`, the Message Follow relays the message took, only by a
 * relay (absent: 0, sent by its sender). `session`, on a call a Session owner relayed to a bound Actor over
 * its binding route (`SessionStamp`: [ownerRid, ownerGeneration, listener, sessionId, bindingGeneration,
 * sequence]; `hops` is then always written). Fields a later version appends come after them and are ignored
 * here; a record shorter than this version's is refused.
 */

/** Which object a message is for, and the route it was sent on. */
export interface ObjectAddress {
  readonly objectKind: ObjectKind;
  /** The global Spot or Actor id. */
  readonly id: string;
  readonly fences: ObjectRouteFences;
  /**
   * Kind, id and fences as every call on this route writes them (`wireAddress`), so a route used
   * for many calls is encoded once; without it each call writes them itself.
   */
  readonly bytes?: Uint8Array;
}

/**
 * An operation id given as `prefix` followed by `seq` in base 36: a caller's ids are written into
 * the record without the string ever being built (the send path's cost). The wire holds the string.
 */
export interface OperationId {
  readonly prefix: string;
  readonly seq: number;
}

/** The string an operation id stands for on the wire. */
export function operationIdString(op: string | OperationId): string {
  return typeof op === 'string' ? op : op.prefix + op.seq.toString(36);
}

/**
 * Who relayed a call from an end-user session: the Session owner's run, the listener and session, the
 * binding it went over and the session's sequence number of the message (its order on the session).
 */
export interface SessionStamp {
  readonly ownerRid: string;
  readonly ownerGeneration: string;
  readonly listener: string;
  readonly sessionId: string;
  readonly bindingGeneration: number;
  readonly sequence: number;
}

/** What an object send and request both carry besides their address. */
interface ObjectCall extends ObjectAddress {
  /**
   * Identifies one operation across relays (duplicate suppression; docs/protocol.md#message-follow keeps it);
   * opaque here.
   */
  readonly operationId: string;
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  readonly trace: TraceFields | undefined;
  /** Message Follow relays it took (docs/protocol.md#message-follow): 0 from its sender, at most 8. */
  readonly hops: number;
  /** Set on a call relayed from an end-user session over its binding route. */
  readonly session?: SessionStamp;
}

export interface ObjectSendRecord extends ObjectCall {
  readonly kind: typeof RecordKind.ObjectSend;
}

export interface ObjectRequestRecord extends ObjectCall {
  readonly kind: typeof RecordKind.ObjectRequest;
  /** The origin's own correlation: with `origin`, the reply route. */
  readonly correlation: number;
  /** The node run that waits for the reply. */
  readonly origin: NodeRun;
}

export interface ObjectReplyRecord {
  readonly kind: typeof RecordKind.ObjectReply;
  readonly correlation: number;
  /** The origin's node generation the request carried: the origin drops a reply for another run. */
  readonly originGeneration: string;
  readonly payload: Uint8Array;
}

export interface ObjectErrorReplyRecord {
  readonly kind: typeof RecordKind.ObjectErrorReply;
  readonly correlation: number;
  readonly originGeneration: string;
  readonly error: WireError;
}

export type ObjectRecord =
  | MessageFollowRecord
  | RelocationChunkRecord
  | RelocationStepRecord
  | ObjectSendRecord
  | ObjectRequestRecord
  | ObjectReplyRecord
  | ObjectErrorReplyRecord
  | ObjectControlRecord
  | ObjectStaleRecord
  | OwnerLeaveRecord
  | SessionRecord
  | SessionRoomPushRecord
  | SpotEventRecord
  | TopicBarrierRecord;

/** Items of a send and of a request as this version writes them, version and kind included. */
export const SEND_LENGTH = 10;
export const REQUEST_LENGTH = 13;

// --- decoding -------------------------------------------------------------------------------

/**
 * Reads one object record: the bytes of one record, as `decodeFrame(frame, true)` hands them back
 * in `objects`. Returns the record, or the reason it is malformed (the caller drops and counts it,
 * as it does `decodeFrame`'s `malformed`); never throws, never answers anyone. Fields after the
 * ones this version knows are ignored; a missing or mistyped field refuses the record. A send or
 * request is plain msgpack to its last byte, as this version writes it: one holding an ext is refused,
 * since msgpackr gives some exts a reach past their own bytes (a record definition, a string bundle)
 * while a relay cuts a call's bytes where a plain walk finds its items (`relayedCallBytes`).
 */
export function decodeObjectRecord(bytes: Uint8Array): ObjectRecord | string {
  if (bytes.length > MAX_FRAME_VALUES && countMsgpackValues(bytes, MAX_FRAME_VALUES) > MAX_FRAME_VALUES)
    return `object record: more than ${MAX_FRAME_VALUES} msgpack values`;
  let value: unknown;
  try {
    value = packr.unpack(bytes);
  } catch (e) {
    return `object record: ${(e as Error).message}`;
  }
  if (!Array.isArray(value) || value[0] !== WIRE_VERSION)
    return 'object record: not a version 1 record array';
  const v = value as unknown[];
  if ((v[1] === RecordKind.ObjectSend || v[1] === RecordKind.ObjectRequest) && !plainToEnd(bytes))
    return 'object call record: holds an ext (a call is plain msgpack)';
  switch (v[1]) {
    case RecordKind.ObjectSend:
      return v.length < SEND_LENGTH
        ? 'malformed object send record'
        : (readCall(v, 2, undefined) ?? 'malformed object send record');
    case RecordKind.ObjectRequest: {
      const [, , correlation, rid, nodeGeneration] = v;
      if (v.length < REQUEST_LENGTH || !isCorrelation(correlation) || !isName(rid) || !isStr(nodeGeneration))
        return 'malformed object request record';
      return (
        readCall(v, 5, { correlation, origin: { rid, nodeGeneration } }) ?? 'malformed object request record'
      );
    }
    case RecordKind.ObjectReply: {
      const [, , correlation, originGeneration, payload] = v;
      if (v.length < 5 || !isCorrelation(correlation) || !isStr(originGeneration) || !isBytes(payload))
        return 'malformed object reply record';
      return { kind: RecordKind.ObjectReply, correlation, originGeneration, payload };
    }
    case RecordKind.ObjectErrorReply: {
      const [, , correlation, originGeneration, body] = v;
      if (
        v.length < 5 ||
        !isCorrelation(correlation) ||
        !isStr(originGeneration) ||
        !Array.isArray(body) ||
        !isStr(body[0]) ||
        !isStr(body[1])
      ) {
        return 'malformed object error reply record';
      }
      const error: WireError =
        body.length > 2
          ? { code: body[0], message: body[1], details: body[2] }
          : { code: body[0], message: body[1] };
      return { kind: RecordKind.ObjectErrorReply, correlation, originGeneration, error };
    }
    case RecordKind.ObjectControl:
    case RecordKind.ObjectStale:
      return decodeObjectControl(v);
    case RecordKind.MessageFollow:
      return decodeMessageFollow(v);
    case RecordKind.RelocationChunk:
      return decodeRelocationChunk(v);
    case RecordKind.RelocationReady:
    case RecordKind.RelocationRelay:
    case RecordKind.RelocationCommit:
    case RecordKind.RelocationCutover:
      return decodeRelocationStep(v);
    case RecordKind.OwnerLeaving:
    case RecordKind.OwnerLeft:
      return decodeOwnerLeave(v);
    case RecordKind.SpotEvent:
      return decodeSpotEvent(v);
    case RecordKind.TopicBarrier:
    case RecordKind.TopicBarrierAck:
      return decodeTopicBarrier(v);
    case RecordKind.SessionBind:
    case RecordKind.SessionPush:
    case RecordKind.SessionBindingEnded:
    case RecordKind.SessionUnbind:
    case RecordKind.SessionRelocationSeal:
    case RecordKind.SessionRelocationSealReply:
    case RecordKind.SessionRelocationRoute:
      return decodeSessionRecord(v);
    case RecordKind.SessionRoomPush:
      return decodeSessionRoomPush(v);
    default:
      return `object record: kind ${typeof v[1] === 'number' ? v[1] : typeof v[1]} is not an object record`;
  }
}

/** Whether `bytes` are one msgpack value with no ext (nor the unused 0xc1) anywhere in it. */
function plainToEnd(bytes: Uint8Array): boolean {
  return msgpackValueEnd(bytes, 0, true) === bytes.length;
}

/** The send or request whose address starts at `at`; `undefined` when a field is not what it must be. */
function readCall(
  v: readonly unknown[],
  at: number,
  route: { correlation: number; origin: NodeRun } | undefined,
): ObjectSendRecord | ObjectRequestRecord | undefined {
  const [objectKind, id, rawFences, operationId, packet, metadata, payload, rawTrace, hops = 0, rawSession] =
    v.slice(at, at + 10);
  const fences = readObjectFences(rawFences);
  const trace = rawTrace === null ? undefined : readFrameworkFields(rawTrace);
  const session = rawSession === undefined || rawSession === null ? undefined : readSessionStamp(rawSession);
  if (
    session === false ||
    !isCount(hops) ||
    !isObjectKind(objectKind) ||
    !isName(id) ||
    fences === undefined ||
    !isName(operationId) ||
    !isStr(packet) ||
    !isMetadata(metadata) ||
    !isBytes(payload) ||
    trace === false
  ) {
    return undefined;
  }
  const call = {
    objectKind,
    id,
    fences,
    operationId,
    packet,
    metadata: metadata ?? undefined,
    payload,
    trace,
    hops,
    ...(session && { session }),
  };
  return route === undefined
    ? { kind: RecordKind.ObjectSend, ...call }
    : { kind: RecordKind.ObjectRequest, correlation: route.correlation, origin: route.origin, ...call };
}

/** A session stamp as `packSessionStamp` writes it; `false` when it is not one. */
function readSessionStamp(v: unknown): SessionStamp | false {
  if (!Array.isArray(v) || v.length < 6) return false;
  const [ownerRid, ownerGeneration, listener, sessionId, bindingGeneration, sequence] = v as unknown[];
  if (
    !isName(ownerRid) ||
    !isStr(ownerGeneration) ||
    !isName(listener) ||
    !isName(sessionId) ||
    !isCount(bindingGeneration) ||
    !isCount(sequence)
  )
    return false;
  return { ownerRid, ownerGeneration, listener, sessionId, bindingGeneration, sequence };
}
