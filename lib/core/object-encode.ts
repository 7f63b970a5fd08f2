import { MAX_UINT32, RecordKind, WIRE_VERSION, packr, strBytes } from './codec.js';
import type { WireError } from './errors.js';
import * as write from './msgpack-write.js';
import type { NodeRun } from './object-stores.js';
import { writeObjectFences } from './object-fences.js';
import { type ObjectAddress, REQUEST_LENGTH, SEND_LENGTH } from './object-wire.js';

/** The object message records written (their layout: `object-wire.ts`). */

/**
 * `head` (a msgpackr array of the scalar items, fewer than `length`) made the record array of
 * `length` items by appending metadata, payload and the trace slot. msgpackr writes an array's
 * items one after the other, so the bytes are exactly those of `packr.pack` of the whole array
 * (property tests hold them to it) while the payload is copied once, not packed again.
 */
function finish(
  head: Uint8Array,
  length: number,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields: Uint8Array | undefined,
): Uint8Array {
  const size = head.length + write.optionalBinSize(metadata) + write.binSize(payload) + (fields?.length ?? 1);
  const out = Buffer.allocUnsafe(size);
  out.set(head, 0);
  out[0] = 0x90 | length;
  const at = write.bin(out, write.optionalBin(out, head.length, metadata), payload);
  if (fields === undefined) out[at] = 0xc0;
  else out.set(fields, at);
  return out;
}

/**
 * An ObjectSend to `to` as resolved (its route fences), `fields` the encoded framework field
 * (`encodeFrameworkFields`) or `undefined`. Metadata and payload are already encoded. Throws only
 * a TypeError for values msgpack cannot hold (never for valid strings and safe integers).
 */
export function encodeObjectSend(
  to: ObjectAddress,
  operationId: string,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  return encodeObjectCall(0, undefined, to, operationId, packet, metadata, payload, fields);
}

/** An ObjectRequest whose reply goes to `origin` under `correlation`, however often it is relayed. */
export function encodeObjectRequest(
  correlation: number,
  origin: NodeRun,
  to: ObjectAddress,
  operationId: string,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
): Uint8Array {
  return encodeObjectCall(correlation, origin, to, operationId, packet, metadata, payload, fields);
}

/**
 * A request when `origin` is given (its reply route), else a send, written by hand as channel calls
 * are (`encodeCall`): names and node runs from the string cache, the id and operation id written in
 * place, the payload copied once. The bytes are those of `packr.pack` of the record array (property
 * tests hold them to it); a number past 32 bits is left to msgpackr, which writes it as a float64.
 */
/** What every object send and request is written from (a send: correlation 0, no origin). */
type ObjectCallArgs = [
  correlation: number,
  origin: NodeRun | undefined,
  to: ObjectAddress,
  operationId: string,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields: Uint8Array | undefined,
];

function encodeObjectCall(
  ...[correlation, origin, to, operationId, packet, metadata, payload, fields]: ObjectCallArgs
): Uint8Array {
  const f = to.fences;
  if (
    correlation > MAX_UINT32 ||
    f.objectGeneration > MAX_UINT32 ||
    f.authorityOwnerGeneration > MAX_UINT32 ||
    f.ownerLeaseGeneration > MAX_UINT32
  ) {
    return packedObjectCall(correlation, origin, to, operationId, packet, metadata, payload, fields);
  }
  const from = origin && strBytes(origin.rid);
  const fromRun = origin && strBytes(origin.nodeGeneration);
  const kind = strBytes(to.objectKind);
  const owner = strBytes(f.owner.rid);
  const ownerRun = strBytes(f.owner.nodeGeneration);
  const name = strBytes(packet);
  const idLength = write.utf8Length(to.id);
  const opLength = write.utf8Length(operationId);
  let size =
    3 +
    kind.length +
    write.strSize(idLength) +
    1 +
    owner.length +
    ownerRun.length +
    write.uintSize(f.objectGeneration) +
    write.uintSize(f.authorityOwnerGeneration) +
    write.uintSize(f.ownerLeaseGeneration) +
    write.strSize(opLength) +
    name.length +
    write.optionalBinSize(metadata) +
    write.binSize(payload) +
    (fields?.length ?? 1);
  if (from && fromRun) size += write.uintSize(correlation) + from.length + fromRun.length;
  const out = Buffer.allocUnsafe(size);
  let at = write.head(
    out,
    origin === undefined ? SEND_LENGTH : REQUEST_LENGTH,
    WIRE_VERSION,
    origin === undefined ? RecordKind.ObjectSend : RecordKind.ObjectRequest,
  );
  if (from && fromRun) at = put(out, put(out, write.uint(out, at, correlation), from), fromRun);
  at = write.str(out, put(out, at, kind), to.id, idLength);
  out[at++] = 0x95;
  at = put(out, put(out, at, owner), ownerRun);
  at = write.uint(out, at, f.objectGeneration);
  at = write.uint(out, at, f.authorityOwnerGeneration);
  at = write.uint(out, at, f.ownerLeaseGeneration);
  at = put(out, write.str(out, at, operationId, opLength), name);
  at = write.bin(out, write.optionalBin(out, at, metadata), payload);
  if (fields === undefined) out[at] = 0xc0;
  else out.set(fields, at);
  return out;
}

function put(out: Buffer, at: number, bytes: Uint8Array): number {
  out.set(bytes, at);
  return at + bytes.length;
}

/** The same record through msgpackr, for numbers the hand-written form does not cover. */
function packedObjectCall(
  ...[correlation, origin, to, operationId, packet, metadata, payload, fields]: ObjectCallArgs
): Uint8Array {
  const items: unknown[] =
    origin === undefined
      ? [WIRE_VERSION, RecordKind.ObjectSend]
      : [WIRE_VERSION, RecordKind.ObjectRequest, correlation, origin.rid, origin.nodeGeneration];
  items.push(to.objectKind, to.id, writeObjectFences(to.fences), operationId, packet);
  const length = origin === undefined ? SEND_LENGTH : REQUEST_LENGTH;
  return finish(packr.pack(items), length, metadata, payload, fields);
}

/** The answer to an ObjectRequest: its correlation and origin generation, echoed. */
export function encodeObjectReply(
  correlation: number,
  originGeneration: string,
  payload: Uint8Array,
): Uint8Array {
  if (correlation > MAX_UINT32) {
    const head = packr.pack([WIRE_VERSION, RecordKind.ObjectReply, correlation, originGeneration]);
    const out = Buffer.allocUnsafe(head.length + write.binSize(payload));
    out.set(head, 0);
    out[0] = 0x95;
    write.bin(out, head.length, payload);
    return out;
  }
  // By hand, as channel replies are: the origin's generation from the string cache, the payload copied once.
  const generation = strBytes(originGeneration);
  const out = Buffer.allocUnsafe(
    3 + write.uintSize(correlation) + generation.length + write.binSize(payload),
  );
  const at = put(
    out,
    write.uint(out, write.head(out, 5, WIRE_VERSION, RecordKind.ObjectReply), correlation),
    generation,
  );
  write.bin(out, at, payload);
  return out;
}

/**
 * The error that ends an ObjectRequest. Never throws for the error's sake: details that cannot be
 * encoded are left out and the message says so, as `encodeErrorReply` does for channel calls.
 */
export function encodeObjectErrorReply(
  correlation: number,
  originGeneration: string,
  error: WireError,
): Uint8Array {
  const code = typeof error.code === 'string' ? error.code : 'HandlerError';
  const message = typeof error.message === 'string' ? error.message : 'handler error';
  const record = (body: unknown[]): Uint8Array =>
    packr.pack([WIRE_VERSION, RecordKind.ObjectErrorReply, correlation, originGeneration, body]);
  if (error.details === undefined) return record([code, message]);
  try {
    return record([code, message, error.details]);
  } catch (e) {
    return record([code, `${message} (details could not be encoded: ${(e as Error).message})`]);
  }
}
