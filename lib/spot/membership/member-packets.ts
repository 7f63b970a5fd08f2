import type { ObjectKind } from '../../core/kinds.js';
import { decodePayload, encodePayload, isCount, isName } from '../../core/wire/index.js';
import { type MemberLeaveReason, RUNTIME_PACKET_PREFIX } from '../../core/objects/index.js';
import type { ObjectSubmission } from '../caller/index.js';

/**
 * The runtime's own membership packets (docs/decisions.md "Actors in Spots"): object calls by id like
 * any other — routed, followed and ordered as they are, and run as turns of the object they reach —
 * that no application code can send (`isRuntimePacket`).
 *
 *     zlink:join    request to a Spot:   [actorId, actorGeneration, actorType, actorRid]
 *     zlink:leave   to a Spot:           [actorId, actorGeneration | 0 (any), reason]
 *     zlink:member  request to an Actor: ['claim' | 'release', spotId | nil]
 */
export const JOIN_PACKET = `${RUNTIME_PACKET_PREFIX}join`;
export const LEAVE_PACKET = `${RUNTIME_PACKET_PREFIX}leave`;
export const MEMBER_PACKET = `${RUNTIME_PACKET_PREFIX}member`;

export interface JoinPayload {
  readonly actorId: string;
  readonly actorGeneration: number;
  readonly actorType: string;
  readonly actorRid: string;
}

export interface LeavePayload {
  readonly actorId: string;
  /** The incarnation that leaves; 0: whichever is the member. */
  readonly actorGeneration: number;
  readonly reason: MemberLeaveReason;
}

export interface MemberPayload {
  readonly op: 'claim' | 'release';
  /** The Spot claimed, or released only if it is this one; `undefined` on release: whichever it is. */
  readonly spot: string | undefined;
}

const LEAVE_REASONS: readonly string[] = ['left', 'destroyed', 'shutdown', 'takenOver', 'failed'];

/** A runtime membership call to (`objectKind`, `id`): a request, or a send for what nobody waits on. */
export function memberSubmission(
  messageKind: 'send' | 'request',
  objectKind: ObjectKind,
  id: string,
  packet: string,
  items: readonly unknown[],
  timeoutMs: number,
): ObjectSubmission {
  return {
    messageKind,
    objectKind,
    id,
    packet,
    metadata: undefined,
    payload: encodePayload(items),
    trace: undefined,
    timeoutMs,
    signal: undefined,
  };
}

function items(payload: Uint8Array, n: number): unknown[] | undefined {
  const decoded = decodePayload(payload);
  return decoded.ok && Array.isArray(decoded.value) && decoded.value.length >= n
    ? (decoded.value as unknown[])
    : undefined;
}

export function readJoin(payload: Uint8Array): JoinPayload | undefined {
  const v = items(payload, 4);
  if (!v || !isName(v[0]) || !isCount(v[1]) || !isName(v[2]) || !isName(v[3])) return undefined;
  return { actorId: v[0], actorGeneration: v[1], actorType: v[2], actorRid: v[3] };
}

export function readLeave(payload: Uint8Array): LeavePayload | undefined {
  const v = items(payload, 3);
  if (!v || !isName(v[0]) || !isCount(v[1]) || typeof v[2] !== 'string' || !LEAVE_REASONS.includes(v[2]))
    return undefined;
  return { actorId: v[0], actorGeneration: v[1], reason: v[2] as MemberLeaveReason };
}

export function readMember(payload: Uint8Array): MemberPayload | undefined {
  const v = items(payload, 2);
  if (!v || (v[0] !== 'claim' && v[0] !== 'release') || (v[1] !== null && !isName(v[1]))) return undefined;
  if (v[0] === 'claim' && v[1] === null) return undefined;
  return { op: v[0], spot: v[1] ?? undefined };
}
