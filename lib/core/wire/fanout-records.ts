import { Buffer } from 'node:buffer';
import {
  MAX_UINT32,
  RecordKind,
  WIRE_VERSION,
  describeValue,
  isBytes,
  isStr,
  packr,
  strBytes,
} from './codec.js';
import { MsgpackReader } from './msgpack-read.js';
import { countMsgpackValues } from './msgpack-scan.js';
import { MAX_FRAME_RECORDS, MAX_FRAME_VALUES } from './wire.js';
import * as write from './msgpack-write.js';

/**
 * Classic fanout records (docs/protocol.md#fanout-records). A PUB message is two frames: the topic (zeromq
 * filters on it) and one record. An event carries a sequence number per (publisher run, topic) so
 * a subscriber can count what HWM dropped on the way; the liveness beacon goes on the reserved topic.
 */

/** The reserved liveness topic: exactly these five bytes (docs/protocol.md#the-liveness-beacon). */
export const BEACON_TOPIC: Buffer = Buffer.from([0x01, 0x5a, 0x4c, 0x46, 0x31]);

export function isBeaconTopic(topic: Uint8Array): boolean {
  return (
    topic.length === 5 &&
    topic[0] === 0x01 &&
    topic[1] === 0x5a &&
    topic[2] === 0x4c &&
    topic[3] === 0x46 &&
    topic[4] === 0x31
  );
}

export interface FanoutBeaconRecord {
  readonly kind: typeof RecordKind.FanoutBeacon;
  /** The ChannelName: a subscriber connected to another channel's publisher finds out. */
  readonly channel: string;
  readonly rid: string;
  readonly generation: string;
}

export function encodeFanoutEvent(seq: number, packet: string, payload: Uint8Array): Uint8Array {
  if (seq > MAX_UINT32) return packr.pack([WIRE_VERSION, RecordKind.FanoutEvent, seq, packet, payload]);
  const name = strBytes(packet);
  const out = Buffer.allocUnsafe(3 + write.uintSize(seq) + name.length + write.binSize(payload));
  const at = write.uint(out, write.head(out, 5, WIRE_VERSION, RecordKind.FanoutEvent), seq);
  out.set(name, at);
  write.bin(out, at + name.length, payload);
  return out;
}

export function encodeFanoutBeacon(channel: string, rid: string, generation: string): Uint8Array {
  return packr.pack([WIRE_VERSION, RecordKind.FanoutBeacon, channel, rid, generation]);
}

const reader = new MsgpackReader();

/**
 * Reads the events of one frame (a publisher batches the events of one topic), calling `onEvent`
 * for each and `onMalformed` with the reason for anything that is not one. Never throws. The usual
 * event (uint seq, ASCII packet, bin payload) is read without msgpackr.
 */
export function readFanoutEvents(
  frame: Uint8Array,
  onEvent: (seq: number, packet: string, payload: Uint8Array) => void,
  onMalformed: (reason: string) => void,
): void {
  let at = 0;
  let read = 0;
  while (at < frame.length) {
    if (frame[at] !== 0x95 || frame[at + 1] !== WIRE_VERSION || frame[at + 2] !== RecordKind.FanoutEvent)
      break;
    if (read++ === MAX_FRAME_RECORDS) {
      onMalformed(`frame: more than ${MAX_FRAME_RECORDS} records; the rest was not read`);
      return;
    }
    const r = reader.reset(frame, at + 3);
    const seq = r.uint();
    const packet = seq === undefined ? undefined : r.asciiFixstr();
    const payload = packet === undefined ? undefined : r.bin();
    if (payload === undefined) break;
    onEvent(seq as number, packet as string, payload);
    at = r.offset;
  }
  if (at < frame.length) slowEvents(at === 0 ? frame : frame.subarray(at), onEvent, onMalformed);
}

/** What the fast reader left: every value through msgpackr, each checked. */
function slowEvents(
  frame: Uint8Array,
  onEvent: (seq: number, packet: string, payload: Uint8Array) => void,
  onMalformed: (reason: string) => void,
): void {
  // The bounds of `decodeRecords` (wire.ts): a frame of one-byte values must not become millions of them.
  if (frame.length > MAX_FRAME_VALUES && countMsgpackValues(frame, MAX_FRAME_VALUES) > MAX_FRAME_VALUES) {
    onMalformed(`frame: more than ${MAX_FRAME_VALUES} msgpack values`);
    return;
  }
  const values: unknown[] = [];
  try {
    packr.unpackMultiple(frame, (value: unknown, _start?: number, end?: number) => {
      values.push(value);
      if (values.length < MAX_FRAME_RECORDS || (end ?? 0) >= frame.length) return true;
      onMalformed(`frame: more than ${MAX_FRAME_RECORDS} records; the rest was not read`);
      return false;
    });
  } catch (e) {
    onMalformed(`frame: ${(e as Error).message}`);
  }
  for (const value of values) {
    const v = checkRecord(value);
    if (typeof v === 'string') onMalformed(v);
    else if (v[1] !== RecordKind.FanoutEvent) onMalformed(`not a fanout event (kind ${describeValue(v[1])})`);
    else {
      const [, , seq, packet, payload] = v;
      if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
        onMalformed('event: bad sequence number');
      else if (!isStr(packet) || packet.length === 0) onMalformed('event: bad packet name');
      else if (!isBytes(payload) || v.length !== 5) onMalformed('event: bad payload');
      else onEvent(seq, packet, payload);
    }
  }
}

/** A beacon is three short strings; anything much longer is not one, and is not decoded. */
const MAX_BEACON_BYTES = 4096;

export function decodeFanoutBeacon(frame: Uint8Array): FanoutBeaconRecord | string {
  if (frame.length > MAX_BEACON_BYTES) return `beacon of ${frame.length} bytes (at most ${MAX_BEACON_BYTES})`;
  const v = unpack(frame);
  if (typeof v === 'string') return v;
  const [, kind, channel, rid, generation] = v;
  if (
    kind !== RecordKind.FanoutBeacon ||
    !isStr(channel) ||
    !isStr(rid) ||
    !isStr(generation) ||
    // Fields a later version appends are ignored (a beacon may grow, like the handshake records).
    v.length < 5
  )
    return 'not a liveness beacon';
  return { kind: RecordKind.FanoutBeacon, channel, rid, generation };
}

function unpack(frame: Uint8Array): unknown[] | string {
  let value: unknown;
  try {
    value = packr.unpack(frame);
  } catch (e) {
    return `record could not be read: ${(e as Error).message}`;
  }
  return checkRecord(value);
}

function checkRecord(value: unknown): unknown[] | string {
  if (!Array.isArray(value) || value.length < 2) return 'record is not an array';
  if (value[0] !== WIRE_VERSION) return `unsupported wire version ${describeValue(value[0])}`;
  return value;
}
