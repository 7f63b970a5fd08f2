import { RecordKind, WIRE_VERSION, isBytes, isCount, isName, packr } from '../../core/wire/index.js';
import { isRuntimePacket } from '../../core/objects/index.js';
import type { SessionIdentity } from './session-wire.js';

/**
 * A Spot's Push to the sessions bound to its members, as one record per Session owner
 * (docs/protocol.md#room-pushes; docs/decisions.md "Room pushes"):
 *
 *     SessionRoomPush [1, 49, spotId, packet, payload, targets, ...later]
 *     targets = [[listener, sessionId, bindingGeneration, actorId], ...]   (at least one)
 *
 * Each target is one binding of a member Actor (`actorId`), checked by the Session owner as a SessionPush
 * (46) of that Actor would be: a stale binding drops its copy, the others still get theirs. A kind of its
 * own rather than more targets on 46: a Session owner of a version without it drops the whole record as
 * an unknown kind (counted), where a longer 46 would have reached the first target only, silently.
 */

/** One binding a room push goes through: the session, and the member Actor it is bound to. */
export interface RoomPushTarget extends SessionIdentity {
  readonly actorId: string;
}

export interface SessionRoomPushRecord {
  readonly kind: typeof RecordKind.SessionRoomPush;
  readonly spotId: string;
  readonly packet: string;
  readonly payload: Uint8Array;
  readonly targets: readonly RoomPushTarget[];
}

export function encodeSessionRoomPush(r: Omit<SessionRoomPushRecord, 'kind'>): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    RecordKind.SessionRoomPush,
    r.spotId,
    r.packet,
    r.payload,
    r.targets.map((t) => [t.listener, t.sessionId, t.bindingGeneration, t.actorId]),
  ]);
}

/** Reads 49 (the record array); the reason it is malformed otherwise. Later fields are ignored. */
export function decodeSessionRoomPush(v: readonly unknown[]): SessionRoomPushRecord | string {
  const [, , spotId, packet, payload, list] = v;
  if (!isName(spotId) || !isName(packet) || !isBytes(payload) || !Array.isArray(list) || list.length === 0)
    return 'malformed session room push record';
  // No client ever gets one of the runtime's own packets, as for 46.
  if (isRuntimePacket(packet)) return `session room push of the runtime's packet '${packet}'`;
  const targets: RoomPushTarget[] = [];
  for (const t of list as unknown[]) {
    if (!Array.isArray(t)) return 'malformed session room push target';
    const [listener, sessionId, bindingGeneration, actorId] = t as unknown[];
    if (!isName(listener) || !isName(sessionId) || !isCount(bindingGeneration) || !isName(actorId))
      return 'malformed session room push target';
    targets.push({ listener, sessionId, bindingGeneration, actorId });
  }
  return { kind: RecordKind.SessionRoomPush, spotId, packet, payload, targets };
}
