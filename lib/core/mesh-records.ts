import {
  type MalformedRecord,
  RecordKind,
  WIRE_VERSION,
  describeValue,
  isBytes,
  isCorrelation,
  isRevision,
  isStr,
  MAX_UINT32,
  packr,
  strBytes,
} from './codec.js';
import { type TraceFields, trailingTrace, withFrameworkFields } from './framework-fields.js';
import * as write from './msgpack-write.js';
import type { ObjectRole } from './mesh-options.js';
import { isValidWeight } from './option-checks.js';

/**
 * RouteMesh records: the handshake that makes a peer ready, its control records, and the business
 * records every ChannelName and Node direct call of one mesh share. They travel between MeshNode
 * ROUTERs; replies reuse the ClientServer `Reply` / `ErrorReply` records.
 */

/** One Server membership a MeshNode publishes: the candidates of ChannelName select-one (02 §3). */
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
}

type StateKind = typeof RecordKind.MeshHello | typeof RecordKind.MeshWelcome | typeof RecordKind.MeshState;

/** Initiator → acceptor (hello), acceptor → initiator (welcome), either way later (state). */
export interface MeshStateRecord extends MeshNodeState {
  readonly kind: StateKind;
}

/** Liveness: a peer that sends nothing for the silence limit is dropped (see `mesh-node.ts`). */
export interface MeshPingRecord {
  readonly kind: typeof RecordKind.MeshPing;
}

/** `channel` names a ChannelName; `undefined` is Node direct (the target is the receiving node). */
export interface MeshSendRecord {
  readonly kind: typeof RecordKind.MeshSend;
  readonly channel: string | undefined;
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  /** The framework field's trace context (see framework-fields.ts); decoders always set the key. */
  readonly trace?: TraceFields | undefined;
}

export interface MeshRequestRecord {
  readonly kind: typeof RecordKind.MeshRequest;
  readonly correlation: number;
  readonly channel: string | undefined;
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  /** The framework field's trace context (see framework-fields.ts); decoders always set the key. */
  readonly trace?: TraceFields | undefined;
}

export type MeshRecord = MeshStateRecord | MeshPingRecord | MeshSendRecord | MeshRequestRecord;

const OBJECT_ROLES: readonly ObjectRole[] = ['none', 'client', 'server'];

export function encodeMeshState(kind: StateKind, s: MeshNodeState): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    kind,
    s.mesh,
    s.rid,
    s.generation,
    s.objectRole,
    s.memberships.map((m) => [m.channel, m.weight, m.draining]),
    s.revision,
  ]);
}

const PING = packr.pack([WIRE_VERSION, RecordKind.MeshPing]);

export function encodeMeshPing(): Uint8Array {
  return PING;
}

/** A Node direct record has no ChannelName: msgpack nil. */
const NIL = Uint8Array.of(0xc0);

/*
 * Sends and requests are written by hand like their ClientServer counterparts (see `encodeRequest`
 * in wire.ts): the payload is copied once. The bytes are exactly those of
 * `packr.pack([WIRE_VERSION, kind, ...fields])` (a property test holds them to it); `fields`, the
 * encoded framework field, is one more trailing item when present.
 */
export function encodeMeshSend(
  channel: string | undefined,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  const scope = channel === undefined ? NIL : strBytes(channel);
  const name = strBytes(packet);
  const size = 3 + scope.length + name.length + write.optionalBinSize(metadata) + write.binSize(payload);
  const out = Buffer.allocUnsafe(fields === undefined ? size : size + fields.length);
  const at = write.head(out, fields === undefined ? 6 : 7, WIRE_VERSION, RecordKind.MeshSend);
  writeCall(out, at, scope, name, metadata, payload, fields);
  return out;
}

export function encodeMeshRequest(
  correlation: number,
  channel: string | undefined,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  if (correlation > MAX_UINT32) {
    const items = [correlation, channel ?? null, packet, metadata ?? null, payload];
    return withFrameworkFields(packr.pack([WIRE_VERSION, RecordKind.MeshRequest, ...items]), fields);
  }
  const scope = channel === undefined ? NIL : strBytes(channel);
  const name = strBytes(packet);
  const size = write.uintSize(correlation) + scope.length + name.length + write.optionalBinSize(metadata);
  const extra = fields === undefined ? 0 : fields.length;
  const out = Buffer.allocUnsafe(3 + size + write.binSize(payload) + extra);
  const head = write.head(out, fields === undefined ? 7 : 8, WIRE_VERSION, RecordKind.MeshRequest);
  writeCall(out, write.uint(out, head, correlation), scope, name, metadata, payload, fields);
  return out;
}

function writeCall(
  out: Buffer,
  at: number,
  scope: Uint8Array,
  name: Uint8Array,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields: Uint8Array | undefined,
): void {
  out.set(scope, at);
  out.set(name, at + scope.length);
  const end = write.bin(out, write.optionalBin(out, at + scope.length + name.length, metadata), payload);
  if (fields !== undefined) out.set(fields, end);
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

const isChannel = (v: unknown): v is string | null => v === null || isStr(v);
const isMetadata = (v: unknown): v is Uint8Array | null => v === null || isBytes(v);

/** Reads a version-checked record array of a RouteMesh kind; never throws. */
export function readMeshRecord(v: unknown[]): MeshRecord | MalformedRecord {
  switch (v[1]) {
    case RecordKind.MeshRequest: {
      const [, , correlation, channel, packet, metadata, payload] = v;
      if (!isCorrelation(correlation)) return { reason: 'mesh request without a valid correlation' };
      const trace = trailingTrace(v, 7);
      if (
        trace === false ||
        !isChannel(channel) ||
        !isStr(packet) ||
        !isMetadata(metadata) ||
        !isBytes(payload)
      ) {
        return { reason: 'malformed mesh request record', correlation };
      }
      return {
        kind: RecordKind.MeshRequest,
        correlation,
        channel: channel ?? undefined,
        packet,
        metadata: metadata ?? undefined,
        payload,
        trace,
      };
    }
    case RecordKind.MeshSend: {
      const [, , channel, packet, metadata, payload] = v;
      const trace = trailingTrace(v, 6);
      if (
        trace === false ||
        !isChannel(channel) ||
        !isStr(packet) ||
        !isMetadata(metadata) ||
        !isBytes(payload)
      ) {
        return { reason: 'malformed mesh send record' };
      }
      return {
        kind: RecordKind.MeshSend,
        channel: channel ?? undefined,
        packet,
        metadata: metadata ?? undefined,
        payload,
        trace,
      };
    }
    case RecordKind.MeshPing:
      return v.length === 2 ? { kind: RecordKind.MeshPing } : { reason: 'malformed mesh ping record' };
    case RecordKind.MeshHello:
    case RecordKind.MeshWelcome:
    case RecordKind.MeshState: {
      const [, kind, mesh, rid, generation, objectRole, memberships, revision] = v;
      const list = readMemberships(memberships);
      // Like the ClientServer handshake (wire.ts): fields after the known ones are a later version's, ignored.
      if (
        v.length < 8 ||
        !isStr(mesh) ||
        !isStr(rid) ||
        rid.length === 0 ||
        !isStr(generation) ||
        !OBJECT_ROLES.includes(objectRole as ObjectRole) ||
        !list ||
        !isRevision(revision)
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
      };
    }
    default:
      return { reason: `unknown record kind ${describeValue(v[1])}` };
  }
}
