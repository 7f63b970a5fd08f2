import { Buffer } from 'node:buffer';
import type { WireError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import {
  MAX_UINT32,
  RecordKind,
  WIRE_VERSION,
  msgpackWrite as write,
  packr,
  strBytes,
} from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import { type ObjectRouteFences, writeObjectFences } from './object-fences.js';
import {
  type ObjectAddress,
  type OperationId,
  REQUEST_LENGTH,
  SEND_LENGTH,
  type SessionStamp,
} from './object-wire.js';

/** The object message records written (their layout: `object-wire.ts`). */

/**
 * An ObjectSend to `to` as resolved (its route fences), `fields` the encoded framework field
 * (`encodeFrameworkFields`) or `undefined`; `hops`, written after it by a Message Follow relay only,
 * the relays the message has taken. Metadata and payload are already encoded. Throws only
 * a TypeError for values msgpack cannot hold (never for valid strings and safe integers).
 */
export function encodeObjectSend(
  to: ObjectAddress,
  operationId: string | OperationId,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
  hops = 0,
  session?: Uint8Array,
): Uint8Array {
  return encodeObjectCall(0, undefined, to, operationId, packet, metadata, payload, fields, hops, session);
}

/** An ObjectRequest whose reply goes to `origin` under `correlation`, however often it is relayed. */
export function encodeObjectRequest(
  correlation: number,
  origin: NodeRun,
  to: ObjectAddress,
  operationId: string | OperationId,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields?: Uint8Array,
  hops = 0,
  session?: Uint8Array,
): Uint8Array {
  return encodeObjectCall(
    correlation,
    origin,
    to,
    operationId,
    packet,
    metadata,
    payload,
    fields,
    hops,
    session,
  );
}

/** Kind, id and the fences array as a record writes them (msgpackr's forms, so any value fits); a copy. */
function packAddress(objectKind: ObjectKind, id: string, fences: ObjectRouteFences): Uint8Array {
  return new Uint8Array(packr.pack([objectKind, id, writeObjectFences(fences)]).subarray(1));
}

/**
 * `to` with its bytes written once (`ObjectAddress.bytes`): a route that carries many calls is not
 * encoded again for each.
 */
export function wireAddress(objectKind: ObjectKind, id: string, fences: ObjectRouteFences): ObjectAddress {
  return { objectKind, id, fences, bytes: packAddress(objectKind, id, fences) };
}

/** The caller's origin (NodeRid and node generation) as a request writes it, kept for the next call. */
let lastOrigin: NodeRun | undefined;
let lastOriginBytes: Uint8Array = new Uint8Array(0);

function originBytes(origin: NodeRun): Uint8Array {
  if (origin !== lastOrigin) {
    const rid = strBytes(origin.rid);
    const run = strBytes(origin.nodeGeneration);
    lastOriginBytes = new Uint8Array(rid.length + run.length);
    lastOriginBytes.set(rid, 0);
    lastOriginBytes.set(run, rid.length);
    lastOrigin = origin;
  }
  return lastOriginBytes;
}

/** The UTF-8 bytes of an operation id's prefix, kept for the next call (one caller, one prefix). */
let lastPrefix = '';
let lastPrefixBytes: Uint8Array = new Uint8Array(0);

function prefixBytes(prefix: string): Uint8Array {
  if (prefix !== lastPrefix) {
    lastPrefixBytes = Buffer.from(prefix, 'utf8');
    lastPrefix = prefix;
  }
  return lastPrefixBytes;
}

/** Digits of `n` (a safe integer >= 0) in base 36. */
function base36Length(n: number): number {
  let digits = 1;
  while (n >= 36) {
    n = Math.floor(n / 36);
    digits++;
  }
  return digits;
}

const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Writes `n` in base 36 into its `digits` bytes at `at`, as `n.toString(36)` spells it. */
function writeBase36(out: Buffer, at: number, n: number, digits: number): number {
  for (let i = at + digits - 1; i >= at; i--) {
    out[i] = BASE36.charCodeAt(n % 36);
    n = Math.floor(n / 36);
  }
  return at + digits;
}

/**
 * A request when `origin` is given (its reply route), else a send, written by hand as channel calls
 * are (`encodeCall`): the address from its route's bytes, the origin and packet names from caches, the
 * operation id written in place (an `OperationId` without its string ever being built), the payload
 * copied once. The bytes are those of `packr.pack` of the record array (property tests hold them to
 * it); a correlation past 32 bits is written by msgpackr (as a float64).
 */
function encodeObjectCall(
  correlation: number,
  origin: NodeRun | undefined,
  to: ObjectAddress,
  operationId: string | OperationId,
  packet: string,
  metadata: Uint8Array | undefined,
  payload: Uint8Array,
  fields: Uint8Array | undefined,
  hops: number,
  session: Uint8Array | undefined,
): Uint8Array {
  const address = to.bytes ?? packAddress(to.objectKind, to.id, to.fences);
  // Relays are rare and a hop count small: only a safe count is written, as msgpackr would. A session's
  // stamp comes after it, so a relayed session call writes its count even when it is 0.
  const relayed = hops > 0 || session ? new Uint8Array(packr.pack(hops)) : undefined;
  const from = origin && originBytes(origin);
  const wide = origin && correlation > MAX_UINT32 ? new Uint8Array(packr.pack(correlation)) : undefined;
  const name = strBytes(packet);
  let op: string | undefined;
  let prefix: Uint8Array | undefined;
  let digits = 0;
  let opLength: number;
  if (typeof operationId === 'string') {
    op = operationId;
    opLength = write.utf8Length(op);
  } else {
    prefix = prefixBytes(operationId.prefix);
    digits = base36Length(operationId.seq);
    opLength = prefix.length + digits;
  }
  let size =
    3 +
    address.length +
    write.strSize(opLength) +
    name.length +
    write.optionalBinSize(metadata) +
    write.binSize(payload) +
    (fields?.length ?? 1) +
    (relayed?.length ?? 0) +
    (session?.length ?? 0);
  if (from) size += (wide ? wide.length : write.uintSize(correlation)) + from.length;
  const out = Buffer.allocUnsafe(size);
  let at = write.head(
    out,
    (origin === undefined ? SEND_LENGTH : REQUEST_LENGTH) + (relayed ? 1 : 0) + (session ? 1 : 0),
    WIRE_VERSION,
    origin === undefined ? RecordKind.ObjectSend : RecordKind.ObjectRequest,
  );
  if (from) at = write.put(out, wide ? write.put(out, at, wide) : write.uint(out, at, correlation), from);
  at = write.put(out, at, address);
  if (op !== undefined) at = write.str(out, at, op, opLength);
  else {
    at = write.put(out, write.strHead(out, at, opLength), prefix as Uint8Array);
    at = writeBase36(out, at, (operationId as OperationId).seq, digits);
  }
  at = write.bin(out, write.optionalBin(out, write.put(out, at, name), metadata), payload);
  if (fields === undefined) out[at++] = 0xc0;
  else at = write.put(out, at, fields);
  if (relayed) at = write.put(out, at, relayed);
  if (session) out.set(session, at);
  return out;
}

/** A session's stamp as a call record carries it (see `SessionStamp`). */
export function packSessionStamp(stamp: SessionStamp): Uint8Array {
  return new Uint8Array(
    packr.pack([
      stamp.ownerRid,
      stamp.ownerGeneration,
      stamp.listener,
      stamp.sessionId,
      stamp.bindingGeneration,
      stamp.sequence,
    ]),
  );
}

/**
 * The items every stamp of one binding shares (all but `sequence`), packed once per binding: a relay
 * adds its sequence number (`stampWithSequence`) instead of packing the strings again.
 */
export function packStampHead(binding: Omit<SessionStamp, 'sequence'>): Uint8Array {
  const head = new Uint8Array(
    packr.pack([
      binding.ownerRid,
      binding.ownerGeneration,
      binding.listener,
      binding.sessionId,
      binding.bindingGeneration,
    ]),
  );
  // A fixarray of six (the sequence follows): the same bytes as `packSessionStamp` writes.
  head[0] = 0x96;
  return head;
}

/** The stamp a binding's `head` (`packStampHead`) and `sequence` make: `packSessionStamp`'s bytes. */
export function stampWithSequence(head: Uint8Array, sequence: number): Uint8Array {
  // msgpackr writes integers past 32 bits as float64: those are left to it.
  const wide = sequence > MAX_UINT32 ? packr.pack(sequence) : undefined;
  const out = Buffer.allocUnsafe(head.length + (wide ? wide.length : write.uintSize(sequence)));
  out.set(head, 0);
  if (wide) out.set(wide, head.length);
  else write.uint(out, head.length, sequence);
  return out;
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
  const at = write.put(
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
