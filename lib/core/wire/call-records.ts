import { Buffer } from 'node:buffer';
import {
  type MalformedRecord,
  RecordKind,
  WIRE_VERSION,
  isBytes,
  isCorrelation,
  isMetadata,
  isStr,
  MAX_UINT32,
  packr,
  strBytes,
} from './codec.js';
import { type TraceFields, trailingTrace, withFrameworkFields } from './framework-fields.js';
import type { WireError } from '../errors.js';
import * as write from './msgpack-write.js';

/**
 * Call records: the sends and requests of every topology, written and read by one implementation.
 * They share one shape, a topology only choosing which of the optional slots its kind has:
 *
 *     [WIRE_VERSION, kind, correlation?, origin?, scope?, packet, metadata | nil, payload, framework field?]
 *
 * `correlation` is a request's; `origin` the NodeRid its reply goes to when that need not be the
 * previous hop (a relayed request: correlation and origin together are its reply route); `scope`
 * is RouteMesh's ChannelName, nil for Node direct. Payload and
 * metadata are already encoded (`bin`), so relays never re-encode them. The replies that end a
 * request are declared here too (the call-frame fast path reads them); wire.ts writes and reads them.
 */

export interface SendRecord {
  readonly kind: typeof RecordKind.Send;
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  /** The framework field's trace context (see framework-fields.ts); decoders always set the key. */
  readonly trace?: TraceFields | undefined;
}

export interface RequestRecord {
  readonly kind: typeof RecordKind.Request;
  readonly correlation: number;
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  readonly trace?: TraceFields | undefined;
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

/**
 * A mesh request with its reply route: `correlation` is the origin's own, and the reply (a plain
 * `Reply` / `ErrorReply`) goes to the node `origin` names, however many hops the request took.
 * Relays forward the record as it is. No MeshNode accepts it yet (dropped as `protocol_error`).
 */
export interface MeshRoutedRequestRecord {
  readonly kind: typeof RecordKind.MeshRoutedRequest;
  readonly correlation: number;
  /** The NodeRid of the node that sent the request and waits for its reply. */
  readonly origin: string;
  readonly channel: string | undefined;
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  readonly trace?: TraceFields | undefined;
}

export type CallRecord =
  SendRecord | RequestRecord | MeshSendRecord | MeshRequestRecord | MeshRoutedRequestRecord;

export interface ReplyRecord {
  readonly kind: typeof RecordKind.Reply;
  readonly correlation: number;
  readonly payload: Uint8Array;
}

export interface ErrorReplyRecord {
  readonly kind: typeof RecordKind.ErrorReply;
  readonly correlation: number;
  readonly error: WireError;
}

/** Which slots a call record kind has; one constant per kind, so the hot path allocates nothing for it. */
export interface CallLayout<R extends CallRecord = CallRecord> {
  readonly kind: R['kind'];
  /** Names the record in a malformed record's reason. */
  readonly name: string;
  readonly correlated: boolean;
  readonly routed: boolean;
  readonly scoped: boolean;
  /** Items before the framework field, version and kind included: the array header without it. */
  readonly length: number;
}

function layout<R extends CallRecord>(
  kind: R['kind'],
  name: string,
  correlated: boolean,
  routed: boolean,
  scoped: boolean,
): CallLayout<R> {
  const length = 5 + Number(correlated) + Number(routed) + Number(scoped);
  return { kind, name, correlated, routed, scoped, length };
}

export const SEND_LAYOUT = layout<SendRecord>(RecordKind.Send, 'send', false, false, false);
export const REQUEST_LAYOUT = layout<RequestRecord>(RecordKind.Request, 'request', true, false, false);
export const MESH_SEND_LAYOUT = layout<MeshSendRecord>(RecordKind.MeshSend, 'mesh send', false, false, true);
export const MESH_REQUEST_LAYOUT = layout<MeshRequestRecord>(
  RecordKind.MeshRequest,
  'mesh request',
  true,
  false,
  true,
);
export const MESH_ROUTED_REQUEST_LAYOUT = layout<MeshRoutedRequestRecord>(
  RecordKind.MeshRoutedRequest,
  'mesh routed request',
  true,
  true,
  true,
);

// --- encoding -------------------------------------------------------------------------------

/** A Node direct record has no ChannelName: msgpack nil. */
const NIL = Uint8Array.of(0xc0);

/**
 * Writes one call record by hand: the payload is copied once instead of msgpackr packing it again
 * as a bin. The bytes are exactly those of `packr.pack([WIRE_VERSION, kind, ...slots])` (property
 * tests hold them to it); `fields`, the encoded framework field (`encodeFrameworkFields`), is one
 * more trailing item when present. `correlation` is read only for a correlated layout, `origin`
 * only for a routed one, `channel` only for a scoped one. Never throws for a valid layout.
 */
export function encodeCall(
  l: CallLayout,
  correlation: number,
  origin: string | undefined,
  channel: string | undefined,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields: Uint8Array | undefined,
): Uint8Array {
  if (l.correlated && correlation > MAX_UINT32) {
    // msgpackr writes integers past 32 bits as float64; such rare records are left to it.
    const items: unknown[] = [WIRE_VERSION, l.kind, correlation];
    if (l.routed) items.push(origin);
    if (l.scoped) items.push(channel ?? null);
    items.push(packet, metadata ?? null, payload);
    return withFrameworkFields(packr.pack(items), fields);
  }
  const from = l.routed ? strBytes(origin as string) : undefined;
  const scope = l.scoped ? (channel === undefined ? NIL : strBytes(channel)) : undefined;
  const name = strBytes(packet);
  let size = 3 + name.length + write.optionalBinSize(metadata) + write.binSize(payload);
  if (l.correlated) size += write.uintSize(correlation);
  if (from !== undefined) size += from.length;
  if (scope !== undefined) size += scope.length;
  const out = Buffer.allocUnsafe(fields === undefined ? size : size + fields.length);
  let at = write.head(out, fields === undefined ? l.length : l.length + 1, WIRE_VERSION, l.kind);
  if (l.correlated) at = write.uint(out, at, correlation);
  if (from !== undefined) at = write.put(out, at, from);
  if (scope !== undefined) at = write.put(out, at, scope);
  out.set(name, at);
  at = write.bin(out, write.optionalBin(out, at + name.length, metadata), payload);
  if (fields !== undefined) out.set(fields, at);
  return out;
}

export function encodeSend(
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  return encodeCall(SEND_LAYOUT, 0, undefined, undefined, packet, metadata, payload, fields);
}

export function encodeRequest(
  correlation: number,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  return encodeCall(REQUEST_LAYOUT, correlation, undefined, undefined, packet, metadata, payload, fields);
}

export function encodeMeshSend(
  channel: string | undefined,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  return encodeCall(MESH_SEND_LAYOUT, 0, undefined, channel, packet, metadata, payload, fields);
}

export function encodeMeshRequest(
  correlation: number,
  channel: string | undefined,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  return encodeCall(MESH_REQUEST_LAYOUT, correlation, undefined, channel, packet, metadata, payload, fields);
}

/**
 * A mesh request whose reply goes to `origin` (this node's NodeRid when it starts the call) under
 * `correlation`, wherever the request is relayed; see `MeshRoutedRequestRecord`.
 */
export function encodeMeshRoutedRequest(
  correlation: number,
  origin: string,
  channel: string | undefined,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  return encodeCall(
    MESH_ROUTED_REQUEST_LAYOUT,
    correlation,
    origin,
    channel,
    packet,
    metadata,
    payload,
    fields,
  );
}

// --- decoding -------------------------------------------------------------------------------

const isScope = (v: unknown): v is string | null => v === null || isStr(v);

/**
 * Reads a version-checked record array of `l`'s kind (decoded by msgpackr); never throws. A
 * request whose correlation is legible but whose other fields are not comes back malformed with
 * its correlation, so the receiver can answer it with a decode error.
 */
export function readCall<R extends CallRecord>(l: CallLayout<R>, v: readonly unknown[]): R | MalformedRecord {
  let at = 2;
  const correlation = l.correlated ? v[at++] : 0;
  if (l.correlated && !isCorrelation(correlation)) return { reason: `${l.name} without a valid correlation` };
  const origin = l.routed ? v[at++] : '';
  const scope = l.scoped ? v[at++] : null;
  const packet = v[at];
  const metadata = v[at + 1];
  const payload = v[at + 2];
  const trace = trailingTrace(v, l.length);
  if (
    trace === false ||
    !isStr(origin) ||
    !isScope(scope) ||
    !isStr(packet) ||
    !isMetadata(metadata) ||
    !isBytes(payload)
  ) {
    const reason = `malformed ${l.name} record`;
    // A routed request's correlation is its origin's, and the previous hop is not the origin: a
    // decode error sent back there could settle an unrelated call of the relay's own.
    return l.correlated && !l.routed ? { reason, correlation: correlation as number } : { reason };
  }
  if (l.routed && origin.length === 0) return { reason: `${l.name} without an origin` };
  const id = correlation as number;
  const md = metadata ?? undefined;
  return callRecord(l.kind, id, origin, scope ?? undefined, packet, md, payload, trace) as R;
}

/**
 * The record of `kind` from its read slots: the one place each record's shape is built, for the
 * msgpackr path (`readCall`) and the fast path (call-frame.ts) alike.
 */
export function callRecord(
  kind: CallRecord['kind'],
  correlation: number,
  origin: string,
  channel: string | undefined,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  trace: TraceFields | undefined,
): CallRecord {
  // Keys in the order the decoders have always written them: one hidden class per kind.
  switch (kind) {
    case RecordKind.Send:
      return { kind, packet, metadata, payload, trace };
    case RecordKind.Request:
      return { kind, correlation, packet, metadata, payload, trace };
    case RecordKind.MeshSend:
      return { kind, channel, packet, metadata, payload, trace };
    case RecordKind.MeshRequest:
      return { kind, correlation, channel, packet, metadata, payload, trace };
    case RecordKind.MeshRoutedRequest:
      return { kind, correlation, origin, channel, packet, metadata, payload, trace };
  }
}
