import { RecordKind, WIRE_VERSION } from './codec.js';
import type { MeshRequestRecord } from './mesh-records.js';
import { MsgpackReader } from './msgpack-read.js';
import type { ReplyRecord, RequestRecord } from './wire.js';

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
  if (frame[0] === 0x96 && frame[2] === RecordKind.Request) {
    const r = reader.reset(frame, 3);
    const correlation = r.uint();
    const packet = correlation ? r.asciiFixstr() : undefined;
    const metadata = packet === undefined ? undefined : r.nilOrBin();
    const payload = metadata === undefined ? undefined : r.bin();
    if (payload === undefined || !r.atEnd) return undefined;
    return {
      kind: RecordKind.Request,
      correlation: correlation as number,
      packet: packet as string,
      metadata: metadata ?? undefined,
      payload,
      trace: undefined,
    };
  }
  if (frame[0] === 0x97 && frame[2] === RecordKind.MeshRequest) {
    const r = reader.reset(frame, 3);
    const correlation = r.uint();
    const channel = correlation ? r.nilOrAsciiFixstr() : undefined;
    const packet = channel === undefined ? undefined : r.asciiFixstr();
    const metadata = packet === undefined ? undefined : r.nilOrBin();
    const payload = metadata === undefined ? undefined : r.bin();
    if (payload === undefined || !r.atEnd) return undefined;
    return {
      kind: RecordKind.MeshRequest,
      correlation: correlation as number,
      channel: channel ?? undefined,
      packet: packet as string,
      metadata: metadata ?? undefined,
      payload,
      trace: undefined,
    };
  }
  return undefined;
}
