import {
  type CallLayout,
  type CallRecord,
  MESH_REQUEST_LAYOUT,
  MESH_SEND_LAYOUT,
  REQUEST_LAYOUT,
  type ReplyRecord,
  SEND_LAYOUT,
  callRecord,
} from './call-records.js';
import { RecordKind, WIRE_VERSION } from './codec.js';
import { MsgpackReader } from './msgpack-read.js';

const reader = new MsgpackReader();

/** The reader's string slots: each field keeps its last string (see `MsgpackReader.asciiStr`). */
const CHANNEL_SLOT = 0;
const PACKET_SLOT = 1;

/** A frame of more records than this is left to msgpackr, which applies the frame's record bound. */
const MAX_FAST_RECORDS = 512;

/** The call layouts read here, by kind. */
function layoutOf(kind: number | undefined): CallLayout | undefined {
  switch (kind) {
    case RecordKind.Send:
      return SEND_LAYOUT;
    case RecordKind.Request:
      return REQUEST_LAYOUT;
    case RecordKind.MeshSend:
      return MESH_SEND_LAYOUT;
    case RecordKind.MeshRequest:
      return MESH_REQUEST_LAYOUT;
    default:
      return undefined;
  }
}

/**
 * A frame of calls and replies (a batch of Send, Request, MeshSend, MeshRequest and Reply records, the
 * traffic of every call in flight) is read without msgpackr: no record array, no string or bin object
 * per field, a packet name that repeats handed back as the same string. Anything the reader does not
 * cover — another kind, str 16, a non-ASCII or empty name, a malformed field, a framework field (its
 * array header is one larger), more than 512 records — returns `undefined`, and `decodeRecords` in
 * wire.ts reads the whole frame instead, to the same records.
 */
export function readCallFrame(frame: Uint8Array): (CallRecord | ReplyRecord)[] | undefined {
  const r = reader.reset(frame, 0);
  const records: (CallRecord | ReplyRecord)[] = [];
  do {
    const at = r.offset;
    if (frame[at + 1] !== WIRE_VERSION || records.length === MAX_FAST_RECORDS) return undefined;
    const head = frame[at] as number;
    const kind = frame[at + 2];
    r.skip(3);
    let record: CallRecord | ReplyRecord | undefined;
    if (head === 0x94 && kind === RecordKind.Reply) record = readReply(r);
    else {
      const l = layoutOf(kind);
      record = l === undefined || head !== (0x90 | l.length) ? undefined : readCall(r, l);
    }
    if (record === undefined) return undefined;
    records.push(record);
  } while (!r.atEnd);
  return records;
}

function readReply(r: MsgpackReader): ReplyRecord | undefined {
  const correlation = r.uint();
  const payload = correlation ? r.bin() : undefined;
  if (payload === undefined) return undefined;
  return { kind: RecordKind.Reply, correlation: correlation as number, payload };
}

/** A call of `l`, slot by slot as `readCall` (call-records.ts) reads it; `undefined` hands it to msgpackr. */
function readCall(r: MsgpackReader, l: CallLayout): CallRecord | undefined {
  let correlation = 0;
  if (l.correlated) {
    const id = r.uint();
    if (!id) return undefined;
    correlation = id;
  }
  let channel: string | undefined;
  if (l.scoped && r.peek() === 0xc0) r.skip(1);
  else if (l.scoped && (channel = r.asciiStr(CHANNEL_SLOT)) === undefined) return undefined;
  const packet = r.asciiStr(PACKET_SLOT);
  const metadata = packet === undefined ? undefined : r.nilOrBin();
  const payload = metadata === undefined ? undefined : r.bin();
  if (payload === undefined) return undefined;
  return callRecord(
    l.kind,
    correlation,
    '',
    channel,
    packet as string,
    metadata ?? undefined,
    payload,
    undefined,
  );
}
