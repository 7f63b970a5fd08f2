/**
 * `decodeFrame(frame, true)`: records of a kind reserved for the object layer come back whole, as
 * views of the frame, in the order they were batched; without the flag they stay malformed.
 */
import { describe, expect, it } from '@jest/globals';
import {
  RESERVED_KINDS,
  RecordKind,
  WIRE_VERSION,
  decodeFrame,
  encodePayload,
  encodeReply,
  joinRecords,
} from '../../../lib/core/index.js';

const objectRecord = (kind: number, n: number) =>
  encodePayload([WIRE_VERSION, kind, n, 'room-42', encodePayload({ n })]);

describe('decodeFrame with object records', () => {
  it('every reserved kind in one batch: each one whole and in order, the other records read as usual', () => {
    const objects = [...RESERVED_KINDS.keys()].map((kind, i) => objectRecord(kind, i + 1));
    const reply = encodeReply(8, encodePayload(2));
    const frame = joinRecords([objects[0] as Uint8Array, reply, ...objects.slice(1)]);
    const decoded = decodeFrame(frame, true);
    expect(decoded.malformed).toEqual([]);
    expect(decoded.records).toMatchObject([{ kind: RecordKind.Reply, correlation: 8 }]);
    expect(decoded.objects?.map((o) => o.kind)).toEqual([...RESERVED_KINDS.keys()]);
    expect(decoded.objects?.map((o) => Buffer.from(o.bytes))).toEqual(objects.map((o) => Buffer.from(o)));
    // Views of the frame, not copies.
    expect(decoded.objects?.[0]?.bytes.buffer).toBe(frame.buffer);
  });

  it('a lone object record is one object', () => {
    const record = objectRecord(RecordKind.ObjectRequest, 5);
    const decoded = decodeFrame(record, true);
    expect(decoded).toMatchObject({
      records: [],
      malformed: [],
      objects: [{ kind: RecordKind.ObjectRequest }],
    });
    expect(Buffer.from(decoded.objects?.[0]?.bytes ?? [])).toEqual(Buffer.from(record));
  });

  it('not asked for: they are malformed, named as reserved, and there is no objects list', () => {
    const decoded = decodeFrame(
      joinRecords([objectRecord(RecordKind.ObjectSend, 1), encodeReply(3, encodePayload(1))]),
    );
    expect(decoded.objects).toBeUndefined();
    expect(decoded.malformed).toEqual([
      { reason: 'record kind 60 (ObjectSend) is reserved; this version does not read it' },
    ]);
  });

  it('another version or an unknown kind is not an object record', () => {
    const decoded = decodeFrame(
      joinRecords([
        encodePayload([WIRE_VERSION + 1, RecordKind.ObjectSend]),
        encodePayload([WIRE_VERSION, 99]),
      ]),
      true,
    );
    expect(decoded.objects).toBeUndefined();
    expect(decoded.malformed).toHaveLength(2);
  });
});
