import {
  type NodeRun,
  RecordKind,
  WIRE_VERSION,
  isBytes,
  isCorrelation,
  isCount,
  isName,
  isStr,
  packr,
} from '../../core/index.js';

/**
 * The records between a Session owner and a bound Actor's owner (DESIGN §7 "Sessions";
 * spot-actor-routing §3; docs/decisions.md "Session bindings"). Relayed messages are ordinary object
 * calls with a session stamp (`SessionStamp` in object-wire.ts); a session's end is an object send of
 * the runtime packet `zlink:session-closed`. What is here is what has no object call to ride on:
 *
 *     SessionBind   [1, 45, correlation, originRid, originGeneration, actorId, objectGeneration, listener, sessionId, bindingGeneration, previous | nil, ...later]
 *     SessionPush   [1, 46, listener, sessionId, bindingGeneration, actorId, packet, payload, ...later]
 *     SessionUnbind [1, 47, correlation, originRid, originGeneration, actorId, sessionOwnerRid, sessionId, bindingGeneration, ...later]
 *
 *     previous = [ownerRid, ownerNodeGeneration]   (the owner run of the binding a rebind replaces)
 *
 * A bind is answered with an ObjectReply whose payload is the route the Actor's owner holds it on
 * (`BoundRoute`), or an ObjectErrorReply; an unbind with an ObjectReply (nil) once the binding is gone.
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

export interface SessionUnbindRecord {
  readonly kind: typeof RecordKind.SessionUnbind;
  readonly correlation: number;
  readonly origin: NodeRun;
  readonly actorId: string;
  readonly sessionOwnerRid: string;
  readonly sessionId: string;
  readonly bindingGeneration: number;
}

export type SessionRecord = SessionBindRecord | SessionPushRecord | SessionUnbindRecord;

/** What an Actor's owner answers a bind with: the fences its route is held on, and the Actor's type. */
export interface BoundRoute {
  readonly type: string;
  readonly nodeGeneration: string;
  readonly authorityOwnerGeneration: number;
  readonly ownerLeaseGeneration: number;
}

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

/** Reads 45, 46 or 47 (the record array); the reason it is malformed otherwise. Later fields are ignored. */
export function decodeSessionRecord(v: readonly unknown[]): SessionRecord | string {
  switch (v[1]) {
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

/** Reads a bind answer's payload; `undefined` when it is not one. */
export function readBoundRoute(value: unknown): BoundRoute | undefined {
  if (!Array.isArray(value)) return undefined;
  const [type, nodeGeneration, aog, olg] = value as unknown[];
  if (!isName(type) || !isStr(nodeGeneration) || !isCount(aog) || !isCount(olg)) return undefined;
  return { type, nodeGeneration, authorityOwnerGeneration: aog, ownerLeaseGeneration: olg };
}

export function boundRouteValue(r: BoundRoute): unknown[] {
  return [r.type, r.nodeGeneration, r.authorityOwnerGeneration, r.ownerLeaseGeneration];
}
