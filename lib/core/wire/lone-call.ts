import {
  type CallLayout,
  MESH_REQUEST_LAYOUT,
  type MeshRequestRecord,
  REQUEST_LAYOUT,
  type ReplyRecord,
  type RequestRecord,
  callRecord,
} from './call-records.js';
import { RecordKind, WIRE_VERSION } from './codec.js';
import { MsgpackReader } from './msgpack-read.js';

const reader = new MsgpackReader();

/**
 * A frame that is one Request, MeshRequest or Reply (one call in flight) is read without msgpackr.
 * Anything the reader does not cover (a batch, str 8, a malformed field, a framework field: its
 * array header is one larger...) goes to `decodeRecords` in wire.ts, which reads the same bytes to
 * the same record.
 */
export function readLoneCall(frame: Uint8Array): RequestRecord | ReplyRecord | MeshRequestRecord | undefined {
  if (frame[1] !== WIRE_VERSION) return undefined;
  if (frame[0] === 0x94 && frame[2] === RecordKind.Reply) {
    const r = reader.reset(frame, 3);
    const correlation = r.uint();
    const payload = correlation ? r.bin() : undefined;
    if (payload === undefined || !r.atEnd) return undefined;
    return { kind: RecordKind.Reply, correlation: correlation as number, payload };
  }
  if (isLone(frame, REQUEST_LAYOUT)) return readRequest(frame, REQUEST_LAYOUT);
  if (isLone(frame, MESH_REQUEST_LAYOUT)) return readRequest(frame, MESH_REQUEST_LAYOUT);
  return undefined;
}

/** The header of a record of `l` without a framework field. */
const isLone = (frame: Uint8Array, l: CallLayout): boolean =>
  frame[0] === (0x90 | l.length) && frame[2] === l.kind;

/**
 * A request of `l`, slot by slot as `readCall` (call-records.ts) reads it; `undefined` hands it to
 * msgpackr. Routed requests stay on that path: their origin would evict the reader's last string.
 */
function readRequest<R extends RequestRecord | MeshRequestRecord>(
  frame: Uint8Array,
  l: CallLayout<R>,
): R | undefined {
  const r = reader.reset(frame, 3);
  const correlation = r.uint();
  const channel = !correlation ? undefined : l.scoped ? r.nilOrAsciiFixstr() : null;
  const packet = channel === undefined ? undefined : r.asciiFixstr();
  const metadata = packet === undefined ? undefined : r.nilOrBin();
  const payload = metadata === undefined ? undefined : r.bin();
  if (payload === undefined || !r.atEnd) return undefined;
  const id = correlation as number;
  return callRecord(
    l.kind,
    id,
    '',
    channel ?? undefined,
    packet as string,
    metadata ?? undefined,
    payload,
    undefined,
  ) as R;
}
