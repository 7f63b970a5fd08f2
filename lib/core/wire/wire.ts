import { Buffer } from 'node:buffer';
import type { WireError } from '../errors.js';
import {
  type MalformedRecord,
  RESERVED_KINDS,
  RecordKind,
  WIRE_VERSION,
  describeValue,
  isBytes,
  isCorrelation,
  isRevision,
  isStr,
  MAX_UINT32,
  packr,
} from './codec.js';
import {
  type ErrorReplyRecord,
  REQUEST_LAYOUT,
  type ReplyRecord,
  type RequestRecord,
  SEND_LAYOUT,
  type SendRecord,
  readCall,
} from './call-records.js';
import { type MeshRecord, readMeshRecord } from './mesh-records.js';
import { readCallFrame } from './call-frame.js';
import { countMsgpackValues, msgpackValueEnd } from './msgpack-scan.js';
import * as write from './msgpack-write.js';
import { isValidWeight } from '../option-checks.js';

export { RESERVED_KINDS, RecordKind, WIRE_VERSION, type MalformedRecord } from './codec.js';
export { MAX_PAYLOAD_VALUES, type PayloadDecodeResult, decodePayload, encodePayload } from './payload.js';
export {
  type ErrorReplyRecord,
  type ReplyRecord,
  type RequestRecord,
  type SendRecord,
  encodeRequest,
  encodeSend,
} from './call-records.js';

/**
 * Wire records. Every record is one msgpack array `[version, kind, ...fields]`; a zeromq message
 * carries one frame holding one record or several records back to back (a batch: msgpack values
 * are self-delimiting). Payload and metadata travel as msgpack `bin` so that a payload that cannot
 * be decoded still leaves the record — and its correlation — readable, and so that relays never
 * re-encode. The decoder never throws: malformed input comes back as a typed failure.
 */

/** Client → server on a fresh connection: which channel the client means. */
export interface HelloRecord {
  readonly kind: typeof RecordKind.Hello;
  readonly channel: string;
  readonly clientId: string;
}

/**
 * Server → client: the identity a connection must confirm before it is ready
 * (docs/protocol.md#clientserver-handshake).
 */
export interface ServerState {
  readonly channel: string;
  readonly serverRid: string;
  /** Random per process start; compared for equality only (docs/protocol.md#lifecycle-generations). */
  readonly generation: string;
  readonly weight: number;
  readonly draining: boolean;
  /**
   * Increases with every weight or drain change within one generation
   * (docs/protocol.md#weights-and-drain-state).
   */
  readonly revision: number;
}

export interface WelcomeRecord extends ServerState {
  readonly kind: typeof RecordKind.Welcome;
}

/**
 * Server → client control record: a weight or drain change (docs/protocol.md#drain: manual clients learn it
 * here).
 */
export interface StateRecord extends ServerState {
  readonly kind: typeof RecordKind.State;
}

/** Either way on a ClientServer connection: the sender is alive (it carries nothing else). */
export interface PingRecord {
  readonly kind: typeof RecordKind.Ping;
}

export type WireRecord =
  | HelloRecord
  | PingRecord
  | WelcomeRecord
  | StateRecord
  | SendRecord
  | RequestRecord
  | ReplyRecord
  | ErrorReplyRecord
  | MeshRecord;

export interface DecodedFrame {
  readonly records: WireRecord[];
  readonly malformed: MalformedRecord[];
  /**
   * Only when `decodeFrame` was asked for them: the records of a kind reserved for the object layer
   * (`RESERVED_KINDS`), which otherwise are in `malformed`. A MeshNode whose object layer listens
   * asks; every other reader leaves them unread.
   */
  readonly objects?: ObjectWireRecord[];
}

/**
 * A record of a reserved (object layer) kind: its kind and its bytes as they arrived (a view of the frame).
 */
export interface ObjectWireRecord {
  readonly kind: number;
  readonly bytes: Uint8Array;
}

// --- encoding -------------------------------------------------------------------------------

export function encodeHello(channel: string, clientId: string): Uint8Array {
  return packr.pack([WIRE_VERSION, RecordKind.Hello, channel, clientId]);
}

const PING = packr.pack([WIRE_VERSION, RecordKind.Ping]);

/** The one ping record (shared bytes: a record is never written to after it is made). */
export function encodePing(): Uint8Array {
  return PING;
}

export function encodeServerState(
  kind: typeof RecordKind.Welcome | typeof RecordKind.State,
  s: ServerState,
): Uint8Array {
  return packr.pack([
    WIRE_VERSION,
    kind,
    s.channel,
    s.serverRid,
    s.generation,
    s.weight,
    s.draining,
    s.revision,
  ]);
}

/*
 * Reply carries an already encoded payload: written by hand like the call records
 * (call-records.ts), it is copied once. The bytes are exactly those of `packr.pack(...)`.
 */
export function encodeReply(correlation: number, payload: Uint8Array): Uint8Array {
  if (correlation > MAX_UINT32) return packr.pack([WIRE_VERSION, RecordKind.Reply, correlation, payload]);
  const out = Buffer.allocUnsafe(3 + write.uintSize(correlation) + write.binSize(payload));
  const at = write.uint(out, write.head(out, 4, WIRE_VERSION, RecordKind.Reply), correlation);
  write.bin(out, at, payload);
  return out;
}

/**
 * Never throws for the error's sake: details that cannot be encoded (a circular object, a BigInt
 * past 64 bits) are left out and the message says so, so the caller still gets its one terminal.
 */
export function encodeErrorReply(correlation: number, error: WireError): Uint8Array {
  const code = typeof error.code === 'string' ? error.code : 'HandlerError';
  const message = typeof error.message === 'string' ? error.message : 'handler error';
  if (error.details !== undefined) {
    try {
      return packr.pack([WIRE_VERSION, RecordKind.ErrorReply, correlation, [code, message, error.details]]);
    } catch (e) {
      const note = `${message} (details could not be encoded: ${(e as Error).message})`;
      return packr.pack([WIRE_VERSION, RecordKind.ErrorReply, correlation, [code, note]]);
    }
  }
  return packr.pack([WIRE_VERSION, RecordKind.ErrorReply, correlation, [code, message]]);
}

// --- decoding -------------------------------------------------------------------------------

/**
 * Splits one frame into records; never throws. With `objects`, records of a reserved kind come back
 * whole in `objects` (only shape `[version, kind, ...]` is checked: reading them is the object
 * layer's) instead of as malformed.
 */
export function decodeFrame(frame: Uint8Array, objects = false): DecodedFrame {
  const calls = readCallFrame(frame);
  return calls === undefined ? decodeRecords(frame, objects) : { records: calls, malformed: NO_MALFORMED };
}

/**
 * What one frame may make the decoder do: read at most `MAX_FRAME_RECORDS` records (a sender batches
 * at most 512 in one message) and decode at most `MAX_FRAME_VALUES` msgpack values, nested ones
 * included. Without them, one 64 MB frame of one-byte values is 64 million records, or one record of
 * 64 million values: seconds of blocked event loop, gigabytes of heap, and a process that aborts.
 */
export const MAX_FRAME_RECORDS = 4096;
export const MAX_FRAME_VALUES = 1 << 20;

/** `decodeFrame` without its fast path: every record through msgpackr. Exported for tests. */
export function decodeRecords(frame: Uint8Array, objects = false): DecodedFrame {
  // A frame holds at most one value per byte: only a large one needs counting.
  if (frame.length > MAX_FRAME_VALUES && countMsgpackValues(frame, MAX_FRAME_VALUES) > MAX_FRAME_VALUES) {
    return { records: [], malformed: [{ reason: `frame: more than ${MAX_FRAME_VALUES} msgpack values` }] };
  }
  // A frame of object records (an object node's usual traffic) is split without msgpackr reading
  // them: the object layer reads each one itself, once.
  if (objects && startsWithObjectRecord(frame, 0)) return splitObjectFrame(frame);
  const values: unknown[] = [];
  // Where each value starts and ends, kept only when object records are asked for (they go out as views).
  const spans: number[] | undefined = objects ? [] : undefined;
  let broken: MalformedRecord | undefined;
  try {
    // On damage, `values` keeps the records before it (they may be replies someone waits for).
    packr.unpackMultiple(frame, (value: unknown, start?: number, end?: number) => {
      values.push(value);
      spans?.push(start ?? 0, end ?? frame.length);
      if (values.length < MAX_FRAME_RECORDS || (end ?? 0) >= frame.length) return true;
      broken = { reason: `frame: more than ${MAX_FRAME_RECORDS} records; the rest was not read` };
      return false;
    });
  } catch (e) {
    broken = { reason: `frame: ${(e as Error).message}` };
  }
  const out = new FrameRecords();
  if (broken) out.malformed(broken);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (spans && isObjectRecord(value)) out.object(value[1], frame.subarray(spans[2 * i], spans[2 * i + 1]));
    else out.read(value);
  }
  return out.frame();
}

/** What one frame decodes to, gathered record by record (both readers of a frame share it). */
class FrameRecords {
  private readonly records: WireRecord[] = [];
  private bad: MalformedRecord[] | undefined;
  private objects: ObjectWireRecord[] | undefined;

  malformed(record: MalformedRecord): void {
    (this.bad ??= []).push(record);
  }

  object(kind: number, bytes: Uint8Array): void {
    (this.objects ??= []).push({ kind, bytes });
  }

  /** The record `value` is (or the reason it cannot be read: a throw included). */
  read(value: unknown): void {
    let r: WireRecord | MalformedRecord;
    try {
      r = toRecord(value);
    } catch (e) {
      r = { reason: `record could not be read: ${(e as Error).message}` };
    }
    if ('kind' in r) this.records.push(r);
    else this.malformed(r);
  }

  frame(): DecodedFrame {
    const { records, bad, objects } = this;
    return { records, malformed: bad ?? NO_MALFORMED, ...(objects && { objects }) };
  }
}

const NO_MALFORMED: MalformedRecord[] = [];

/** A fixarray record of this version whose kind is an object layer's: its header says so, unread. */
function startsWithObjectRecord(frame: Uint8Array, at: number): boolean {
  return (
    ((frame[at] as number) & 0xf0) === 0x90 &&
    frame[at + 1] === WIRE_VERSION &&
    RESERVED_KINDS.has(frame[at + 2] as number)
  );
}

/**
 * `decodeRecords` for a frame that starts with an object record: each record's end is found by
 * walking its headers (`msgpackValueEnd`); object records go out as views, unread, and any other
 * record is read by msgpackr alone, as `decodeRecords` would read it. The same records, the same
 * bounds (`MAX_FRAME_RECORDS`), the same treatment of a damaged tail (what came before it is kept).
 */
function splitObjectFrame(frame: Uint8Array): DecodedFrame {
  const out = new FrameRecords();
  for (let at = 0, count = 0; at < frame.length; count++) {
    if (count >= MAX_FRAME_RECORDS) {
      out.malformed({ reason: `frame: more than ${MAX_FRAME_RECORDS} records; the rest was not read` });
      break;
    }
    const end = msgpackValueEnd(frame, at);
    if (end < 0) {
      out.malformed({ reason: 'frame: a record runs past the end of the frame' });
      break;
    }
    const bytes = frame.subarray(at, end);
    at = end;
    if (startsWithObjectRecord(bytes, 0)) {
      out.object(bytes[2] as number, bytes);
      continue;
    }
    let value: unknown;
    try {
      value = packr.unpack(bytes);
    } catch (e) {
      out.malformed({ reason: `record could not be read: ${(e as Error).message}` });
      continue;
    }
    if (isObjectRecord(value)) out.object(value[1], bytes);
    else out.read(value);
  }
  return out.frame();
}

const isObjectRecord = (value: unknown): value is [number, number, ...unknown[]] =>
  Array.isArray(value) && value[0] === WIRE_VERSION && RESERVED_KINDS.has(value[1] as number);

const isWeight = isValidWeight;

function toRecord(value: unknown): WireRecord | MalformedRecord {
  if (!Array.isArray(value) || value.length < 2) return { reason: 'record is not an array' };
  if (value[0] !== WIRE_VERSION) return { reason: `unsupported wire version ${describeValue(value[0])}` };
  const v = value as unknown[];
  switch (v[1]) {
    case RecordKind.Request:
      return readCall(REQUEST_LAYOUT, v);
    case RecordKind.Send:
      return readCall(SEND_LAYOUT, v);
    case RecordKind.Reply: {
      const [, , correlation, payload] = v;
      if (v.length !== 4 || !isCorrelation(correlation) || !isBytes(payload))
        return { reason: 'malformed reply record' };
      return { kind: RecordKind.Reply, correlation, payload };
    }
    case RecordKind.ErrorReply: {
      const [, , correlation, body] = v;
      if (
        v.length !== 4 ||
        !isCorrelation(correlation) ||
        !Array.isArray(body) ||
        !isStr(body[0]) ||
        !isStr(body[1])
      ) {
        return { reason: 'malformed error reply record' };
      }
      const error: WireError =
        body.length > 2
          ? { code: body[0], message: body[1], details: body[2] }
          : { code: body[0], message: body[1] };
      return { kind: RecordKind.ErrorReply, correlation, error };
    }
    // Handshake and state records may grow: a reader takes the fields it knows and ignores any after
    // them, so a later version can add one without breaking older peers. Missing fields still fail.
    case RecordKind.Hello: {
      const [, , channel, clientId] = v;
      if (v.length < 4 || !isStr(channel) || !isStr(clientId)) return { reason: 'malformed hello record' };
      return { kind: RecordKind.Hello, channel, clientId };
    }
    case RecordKind.Ping:
      return v.length === 2 ? { kind: RecordKind.Ping } : { reason: 'malformed ping record' };
    case RecordKind.Welcome:
    case RecordKind.State: {
      const [, kind, channel, serverRid, generation, weight, draining, revision] = v;
      if (
        v.length < 8 ||
        !isStr(channel) ||
        !isStr(serverRid) ||
        !isStr(generation) ||
        !isWeight(weight) ||
        typeof draining !== 'boolean' ||
        !isRevision(revision)
      ) {
        return { reason: 'malformed server state record' };
      }
      return {
        kind: kind as typeof RecordKind.Welcome,
        channel,
        serverRid,
        generation,
        weight,
        draining,
        revision,
      };
    }
    default:
      return readMeshRecord(v);
  }
}

/** Joins records queued for one peer into one frame (a batch). */
export function joinRecords(records: readonly Uint8Array[]): Uint8Array {
  return records.length === 1 ? (records[0] as Uint8Array) : Buffer.concat(records);
}
