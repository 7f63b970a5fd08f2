import {
  RecordKind,
  WIRE_VERSION,
  isBytes,
  isCorrelation,
  isCount,
  isName,
  isStr,
  packr,
} from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import { isRuntimePacket } from '../../core/objects/index.js';

/**
 * The records between a Session owner and a bound Actor's owner (docs/architecture.md#sessions;
 * docs/protocol.md#session-bindings; docs/decisions.md "Session bindings"). Relayed messages are ordinary
 * object calls with a session stamp (`SessionStamp` in object-wire.ts); a session's end is an object send of
 * the runtime packet `zlink:session-closed`. What is here is what has no object call to ride on:
 *
 *     SessionBind   [1, 45, correlation, originRid, originGeneration, actorId, objectGeneration, listener, sessionId, bindingGeneration, previous | nil, ...later]
 *     SessionPush   [1, 46, listener, sessionId, bindingGeneration, actorId, packet, payload, ...later]
 *     SessionUnbind [1, 47, correlation, originRid, originGeneration, actorId, sessionOwnerRid, sessionId, bindingGeneration, ...later]
 *     SessionBindingEnded [1, 48, listener, sessionId, bindingGeneration, actorId, ...later]
 *     SessionRelocationSeal      [1, 42, correlation, originRid, originGeneration, relocationId, listener, sessionId, bindingGeneration, actorId, ...later]
 *     SessionRelocationSealReply [1, 43, correlation, originGeneration, ...later]
 *     SessionRelocationRoute     [1, 44, relocationId, listener, sessionId, bindingGeneration, actorId, objectGeneration, outcome, route | nil, ...later]
 *
 *     route = [type, ownerRid, nodeGeneration, authorityOwnerGeneration, ownerLeaseGeneration, objectGeneration]
 *
 * 42–44 are the commands of docs/protocol.md#bound-actors-that-move: a moving bound Actor's source seals each
 * binding (the Session owner holds what it would relay, and answers 43 behind everything it relayed before),
 * and the target commits the new route once the Actor runs there — or the source aborts (`outcome` `abort`,
 * no route) and the held messages go to the old route. 44 is one-way and never retried.
 *
 *     previous = [ownerRid, ownerNodeGeneration]   (the owner run of the binding a rebind replaces)
 *
 * 48 goes where a Push for the binding would go, behind the Actor's earlier Pushes: the incarnation was
 * destroyed (docs/sessions.md#when-a-binding-ends). It is its own kind so that no packet means it.
 *
 * A bind is answered with an ObjectReply whose payload is the route the Actor's owner holds it on
 * (`route` below), or an ObjectErrorReply; an unbind with an ObjectReply (nil) once the binding is gone.
 */

/** The session a binding belongs to, on its owner run. */
export interface SessionIdentity {
  readonly listener: string;
  readonly sessionId: string;
  readonly bindingGeneration: number;
}

export interface SessionBindRecord extends SessionIdentity {
  readonly kind: typeof RecordKind.SessionBind;
  readonly correlation: number;
  readonly origin: NodeRun;
  readonly actorId: string;
  readonly objectGeneration: number;
  readonly previous: NodeRun | undefined;
}

export interface SessionPushRecord extends SessionIdentity {
  readonly kind: typeof RecordKind.SessionPush;
  readonly actorId: string;
  readonly packet: string;
  readonly payload: Uint8Array;
}

/** The incarnation a binding was made to is destroyed: the binding ended with it (48). */
export interface SessionBindingEndedRecord extends SessionIdentity {
  readonly kind: typeof RecordKind.SessionBindingEnded;
  readonly actorId: string;
}

export interface SessionUnbindRecord {
  readonly kind: typeof RecordKind.SessionUnbind;
  readonly correlation: number;
  readonly origin: NodeRun;
  readonly actorId: string;
  readonly sessionOwnerRid: string;
  readonly sessionId: string;
  readonly bindingGeneration: number;
}

export interface SessionSealRecord extends SessionIdentity {
  readonly kind: typeof RecordKind.SessionRelocationSeal;
  readonly correlation: number;
  readonly origin: NodeRun;
  readonly relocationId: string;
  readonly actorId: string;
}

export interface SessionSealReplyRecord {
  readonly kind: typeof RecordKind.SessionRelocationSealReply;
  readonly correlation: number;
  readonly originGeneration: string;
}

export interface SessionRouteRecord extends SessionIdentity {
  readonly kind: typeof RecordKind.SessionRelocationRoute;
  readonly relocationId: string;
  readonly actorId: string;
  readonly objectGeneration: number;
  readonly outcome: 'commit' | 'abort';
  /** The new route (a commit): as a bind's answer carries it (`bindingRouteOf` reads it). */
  readonly route: readonly unknown[] | undefined;
}

export type SessionRecord =
  | SessionBindRecord
  | SessionPushRecord
  | SessionBindingEndedRecord
  | SessionUnbindRecord
  | SessionSealRecord
  | SessionSealReplyRecord
  | SessionRouteRecord;

export function encodeSessionBind(r: Omit<SessionBindRecord, 'kind'>): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    RecordKind.SessionBind,
    r.correlation,
    r.origin.rid,
    r.origin.nodeGeneration,
    r.actorId,
    r.objectGeneration,
    r.listener,
    r.sessionId,
    r.bindingGeneration,
    r.previous ? [r.previous.rid, r.previous.nodeGeneration] : null,
  ]);
}

export function encodeSessionPush(r: Omit<SessionPushRecord, 'kind'>): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    RecordKind.SessionPush,
    r.listener,
    r.sessionId,
    r.bindingGeneration,
    r.actorId,
    r.packet,
    r.payload,
  ]);
}

export function encodeSessionBindingEnded(r: Omit<SessionBindingEndedRecord, 'kind'>): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    RecordKind.SessionBindingEnded,
    r.listener,
    r.sessionId,
    r.bindingGeneration,
    r.actorId,
  ]);
}

export function encodeSessionUnbind(r: Omit<SessionUnbindRecord, 'kind'>): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    RecordKind.SessionUnbind,
    r.correlation,
    r.origin.rid,
    r.origin.nodeGeneration,
    r.actorId,
    r.sessionOwnerRid,
    r.sessionId,
    r.bindingGeneration,
  ]);
}

export function encodeSessionSeal(r: Omit<SessionSealRecord, 'kind'>): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    RecordKind.SessionRelocationSeal,
    r.correlation,
    r.origin.rid,
    r.origin.nodeGeneration,
    r.relocationId,
    r.listener,
    r.sessionId,
    r.bindingGeneration,
    r.actorId,
  ]);
}

export function encodeSessionSealReply(correlation: number, originGeneration: string): Uint8Array {
  return packr.pack([WIRE_VERSION, RecordKind.SessionRelocationSealReply, correlation, originGeneration]);
}

export function encodeSessionRoute(r: Omit<SessionRouteRecord, 'kind'>): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    RecordKind.SessionRelocationRoute,
    r.relocationId,
    r.listener,
    r.sessionId,
    r.bindingGeneration,
    r.actorId,
    r.objectGeneration,
    r.outcome,
    r.route ?? null,
  ]);
}

/** Reads 42–48 (the record array); the reason it is malformed otherwise. Later fields are ignored. */
export function decodeSessionRecord(v: readonly unknown[]): SessionRecord | string {
  switch (v[1]) {
    case RecordKind.SessionRelocationSeal: {
      const [, , correlation, rid, nodeGeneration, relocationId, listener, sessionId, gen, actorId] = v;
      if (
        !isCorrelation(correlation) ||
        !isName(rid) ||
        !isStr(nodeGeneration) ||
        !isName(relocationId) ||
        !isName(listener) ||
        !isName(sessionId) ||
        !isCount(gen) ||
        !isName(actorId)
      )
        return 'malformed session relocation seal record';
      return {
        kind: RecordKind.SessionRelocationSeal,
        correlation,
        origin: { rid, nodeGeneration },
        relocationId,
        listener,
        sessionId,
        bindingGeneration: gen,
        actorId,
      };
    }
    case RecordKind.SessionRelocationSealReply: {
      const [, , correlation, originGeneration] = v;
      if (!isCorrelation(correlation) || !isStr(originGeneration))
        return 'malformed session seal reply record';
      return { kind: RecordKind.SessionRelocationSealReply, correlation, originGeneration };
    }
    case RecordKind.SessionRelocationRoute: {
      const [, , relocationId, listener, sessionId, gen, actorId, objectGeneration, outcome, route] = v;
      if (
        !isName(relocationId) ||
        !isName(listener) ||
        !isName(sessionId) ||
        !isCount(gen) ||
        !isName(actorId) ||
        !isCount(objectGeneration) ||
        (outcome !== 'commit' && outcome !== 'abort') ||
        (outcome === 'commit' ? !Array.isArray(route) : route !== null && route !== undefined)
      )
        return 'malformed session relocation route record';
      return {
        kind: RecordKind.SessionRelocationRoute,
        relocationId,
        listener,
        sessionId,
        bindingGeneration: gen,
        actorId,
        objectGeneration,
        outcome,
        route: outcome === 'commit' ? (route as unknown[]) : undefined,
      };
    }
    case RecordKind.SessionBind: {
      const [
        ,
        ,
        correlation,
        rid,
        nodeGeneration,
        actorId,
        objectGeneration,
        listener,
        sessionId,
        gen,
        prev,
      ] = v;
      const previous =
        prev === null || prev === undefined
          ? undefined
          : Array.isArray(prev) && isName(prev[0]) && isStr(prev[1])
            ? { rid: prev[0], nodeGeneration: prev[1] }
            : false;
      if (
        !isCorrelation(correlation) ||
        !isName(rid) ||
        !isStr(nodeGeneration) ||
        !isName(actorId) ||
        !isCount(objectGeneration) ||
        !isName(listener) ||
        !isName(sessionId) ||
        !isCount(gen) ||
        previous === false
      )
        return 'malformed session bind record';
      return {
        kind: RecordKind.SessionBind,
        correlation,
        origin: { rid, nodeGeneration },
        actorId,
        objectGeneration,
        listener,
        sessionId,
        bindingGeneration: gen,
        previous,
      };
    }
    case RecordKind.SessionPush: {
      const [, , listener, sessionId, gen, actorId, packet, payload] = v;
      if (
        !isName(listener) ||
        !isName(sessionId) ||
        !isCount(gen) ||
        !isName(actorId) ||
        !isName(packet) ||
        !isBytes(payload)
      )
        return 'malformed session push record';
      // No client ever gets one of the runtime's own packets (a peer's Push of zlink:binding-ended
      // before record 48 existed, or a forgery): dropped and counted here.
      if (isRuntimePacket(packet)) return `session push of the runtime's packet '${packet}'`;
      return {
        kind: RecordKind.SessionPush,
        listener,
        sessionId,
        bindingGeneration: gen,
        actorId,
        packet,
        payload,
      };
    }
    case RecordKind.SessionBindingEnded: {
      const [, , listener, sessionId, gen, actorId] = v;
      if (!isName(listener) || !isName(sessionId) || !isCount(gen) || !isName(actorId))
        return 'malformed session binding ended record';
      return { kind: RecordKind.SessionBindingEnded, listener, sessionId, bindingGeneration: gen, actorId };
    }
    case RecordKind.SessionUnbind: {
      const [, , correlation, rid, nodeGeneration, actorId, sessionOwnerRid, sessionId, gen] = v;
      if (
        !isCorrelation(correlation) ||
        !isName(rid) ||
        !isStr(nodeGeneration) ||
        !isName(actorId) ||
        !isName(sessionOwnerRid) ||
        !isName(sessionId) ||
        !isCount(gen)
      )
        return 'malformed session unbind record';
      return {
        kind: RecordKind.SessionUnbind,
        correlation,
        origin: { rid, nodeGeneration },
        actorId,
        sessionOwnerRid,
        sessionId,
        bindingGeneration: gen,
      };
    }
    default:
      return 'not a session record';
  }
}
