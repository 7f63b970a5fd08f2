import {
  MESH_REQUEST_LAYOUT,
  MESH_ROUTED_REQUEST_LAYOUT,
  MESH_SEND_LAYOUT,
  type MeshRequestRecord,
  type MeshRoutedRequestRecord,
  type MeshSendRecord,
  readCall,
} from './call-records.js';
import {
  type MalformedRecord,
  RecordKind,
  WIRE_VERSION,
  isBytes,
  isRevision,
  isStr,
  packr,
  unreadableKind,
} from './codec.js';
import type { ObjectRole } from '../kinds.js';
import { isValidWeight } from '../option-checks.js';

export {
  type MeshRequestRecord,
  type MeshRoutedRequestRecord,
  type MeshSendRecord,
  encodeMeshRequest,
  encodeMeshRoutedRequest,
  encodeMeshSend,
} from './call-records.js';

/**
 * RouteMesh records: the handshake that makes a peer ready, its control records, and the business
 * records every ChannelName and Node direct call of one mesh share. They travel between MeshNode
 * ROUTERs; replies reuse the ClientServer `Reply` / `ErrorReply` records.
 */

/**
 * One Server membership a MeshNode publishes: the candidates of ChannelName select-one
 * (docs/protocol.md#select-one).
 */
export interface MeshMembership {
  readonly channel: string;
  readonly weight: number;
  readonly draining: boolean;
}

/** What a MeshNode tells its peers about itself in the handshake and in every later change. */
export interface MeshNodeState {
  readonly mesh: string;
  readonly rid: string;
  /** Random per runtime start; compared for equality only. */
  readonly generation: string;
  readonly objectRole: ObjectRole;
  readonly memberships: readonly MeshMembership[];
  /** Grows with every membership change within one generation; peers apply only a larger one. */
  readonly revision: number;
  /**
   * The object types (Spot and Actor type names) this node hosts as an Object Server; absent when
   * it hosts none. On the wire the first field after `revision`, written only when not empty, so a
   * node hosting none sends the record older versions send.
   */
  readonly objectTypes?: readonly string[];
  /**
   * The (channel, topic) pairs of Logical Multicast that live Spots on this node subscribe to; absent
   * when none. On the wire the field after the proof slot (written `nil` without one), written only
   * when not empty, like `objectTypes`.
   */
  readonly topics?: readonly MulticastTopic[];
  /**
   * The node drains: it takes no new work and is about to leave the mesh, so peers take its going as a
   * graceful leave (logged at info, not as a loss). On the wire the field after `topics` (written `[]`
   * without any), written only when true.
   */
  readonly draining?: boolean;
}

/** One Logical Multicast subscription as a node advertises it: a channel and a topic on it. */
export interface MulticastTopic {
  readonly channel: string;
  readonly topic: string;
}

type StateKind = typeof RecordKind.MeshHello | typeof RecordKind.MeshWelcome | typeof RecordKind.MeshState;

/** Initiator → acceptor (hello), acceptor → initiator (welcome), either way later (state). */
export interface MeshStateRecord extends MeshNodeState {
  readonly kind: StateKind;
  /**
   * With CURVE, on a hello or welcome: the sender's proof that it holds the key its NodeRid is known
   * by (see `MeshCurve`): 32 bytes. On the wire the field after `objectTypes` (written as `[]` then).
   */
  readonly proof?: Uint8Array;
}

/** Liveness: a peer that sends nothing for the silence limit is dropped (see `mesh-node.ts`). */
export interface MeshPingRecord {
  readonly kind: typeof RecordKind.MeshPing;
}

export type MeshRecord =
  MeshStateRecord | MeshPingRecord | MeshSendRecord | MeshRequestRecord | MeshRoutedRequestRecord;

const OBJECT_ROLES: readonly ObjectRole[] = ['none', 'client', 'server'];

export function encodeMeshState(kind: StateKind, s: MeshNodeState, proof?: Uint8Array): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    kind,
    s.mesh,
    s.rid,
    s.generation,
    s.objectRole,
    s.memberships.map((m) => [m.channel, m.weight, m.draining]),
    s.revision,
    ...stateTail(s, proof),
  ]);
}

/** The grown fields after `revision`, each written only when it or a later one is there. */
function stateTail(s: MeshNodeState, proof: Uint8Array | undefined): unknown[] {
  if (s.topics?.length || s.draining === true) {
    const pairs = (s.topics ?? []).map((t) => [t.channel, t.topic]);
    return [s.objectTypes ?? [], proof ?? null, pairs, ...(s.draining === true ? [true] : [])];
  }
  if (proof) return [s.objectTypes ?? [], proof];
  return s.objectTypes?.length ? [s.objectTypes] : [];
}

const PING = packr.pack([WIRE_VERSION, RecordKind.MeshPing]);

export function encodeMeshPing(): Uint8Array {
  return PING;
}

/** Non-empty type names; `undefined` when the field is not that (the record is then malformed). */
function readObjectTypes(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const t of value as unknown[]) if (!isStr(t) || t.length === 0) return undefined;
  return value as string[];
}

/** `[channel, topic]` pairs of non-empty strings; `undefined` when the field is not that (malformed). */
function readTopics(value: unknown): MulticastTopic[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: MulticastTopic[] = [];
  for (const t of value as unknown[]) {
    if (!Array.isArray(t) || t.length < 2) return undefined;
    const [channel, topic] = t as unknown[];
    if (!isStr(channel) || channel.length === 0 || !isStr(topic) || topic.length === 0) return undefined;
    out.push({ channel, topic });
  }
  return out;
}

/** Entries may grow like the record holding them: a later version's fields after `draining` are ignored. */
function readMemberships(value: unknown): MeshMembership[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: MeshMembership[] = [];
  for (const m of value as unknown[]) {
    if (!Array.isArray(m) || m.length < 3) return undefined;
    const [channel, weight, draining] = m as unknown[];
    if (!isStr(channel) || !isValidWeight(weight) || typeof draining !== 'boolean') return undefined;
    out.push({ channel, weight, draining });
  }
  return out;
}

/** Reads a version-checked record array of a RouteMesh kind; never throws. */
export function readMeshRecord(v: unknown[]): MeshRecord | MalformedRecord {
  switch (v[1]) {
    case RecordKind.MeshRequest:
      return readCall(MESH_REQUEST_LAYOUT, v);
    case RecordKind.MeshSend:
      return readCall(MESH_SEND_LAYOUT, v);
    case RecordKind.MeshRoutedRequest:
      return readCall(MESH_ROUTED_REQUEST_LAYOUT, v);
    case RecordKind.MeshPing:
      return v.length === 2 ? { kind: RecordKind.MeshPing } : { reason: 'malformed mesh ping record' };
    case RecordKind.MeshHello:
    case RecordKind.MeshWelcome:
    case RecordKind.MeshState: {
      const [, kind, mesh, rid, generation, objectRole, memberships, revision, types, proof, pairs] = v;
      const list = readMemberships(memberships);
      const objectTypes = v.length > 8 ? readObjectTypes(types) : undefined;
      const topics = v.length > 10 ? readTopics(pairs) : undefined;
      // Like the ClientServer handshake (wire.ts): fields after the known ones are a later version's,
      // ignored.
      if (
        v.length < 8 ||
        !isStr(mesh) ||
        !isStr(rid) ||
        rid.length === 0 ||
        !isStr(generation) ||
        !OBJECT_ROLES.includes(objectRole as ObjectRole) ||
        !list ||
        !isRevision(revision) ||
        (v.length > 8 && !objectTypes) ||
        (v.length > 10 && !topics)
      ) {
        return { reason: 'malformed mesh node state record' };
      }
      return {
        kind: kind as StateKind,
        mesh,
        rid,
        generation,
        objectRole: objectRole as ObjectRole,
        memberships: list,
        revision,
        ...(objectTypes !== undefined && objectTypes.length > 0 && { objectTypes }),
        // A proof is an HMAC-SHA-256 (32 bytes); anything else there is a later version's, ignored.
        ...(isBytes(proof) && proof.length === 32 && { proof }),
        ...(topics !== undefined && topics.length > 0 && { topics }),
        // Anything but `true` there is a later version's, ignored.
        ...(v[11] === true && { draining: true }),
      };
    }
    default:
      return unreadableKind(v[1]);
  }
}
