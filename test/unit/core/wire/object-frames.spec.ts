/**
 * `decodeFrame(frame, true)`: records of a kind reserved for the object layer come back whole, as
 * views of the frame, in the order they were batched; without the flag they stay malformed.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  RESERVED_KINDS,
  RecordKind,
  WIRE_VERSION,
  decodeFrame,
  decodeRecords,
  encodePayload,
  encodeReply,
  joinRecords,
} from '../../../../lib/core/index.js';
import { msgpackValueEnd } from '../../../../lib/core/wire/msgpack-scan.js';

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

describe('a frame that starts with an object record is split without msgpackr reading the objects', () => {
  const channelRecords = fc.oneof(
    fc
      .tuple(fc.integer({ min: 1, max: 2 ** 31 }), fc.jsonValue())
      .map(([c, v]) => encodeReply(c, encodePayload(v))),
    fc.constant(encodePayload([WIRE_VERSION, 99, 'unknown kind'])),
    fc.constant(encodePayload('not a record')),
  );
  const objectRecords = fc
    .tuple(fc.constantFrom(...RESERVED_KINDS.keys()), fc.integer({ min: 0, max: 2 ** 40 }), fc.jsonValue())
    .map(([kind, n, v]) =>
      encodePayload([WIRE_VERSION, kind, n, 'id', v, ...Array.from({ length: n % 20 }, () => 1)]),
    );

  it('reads the same records, objects and malformed records as msgpackr does (property)', () => {
    fc.assert(
      fc.property(
        objectRecords,
        fc.array(fc.oneof(channelRecords, objectRecords), { maxLength: 12 }),
        (first, rest) => {
          const split = decodeRecords(joinRecords([first, ...rest]), true);
          // The same records behind a leading channel record take msgpackr's path: the reference.
          const lead = encodeReply(1, encodePayload(null));
          const reference = decodeRecords(joinRecords([lead, first, ...rest]), true);
          expect(split.records).toEqual(reference.records.slice(1));
          expect(split.malformed).toEqual(reference.malformed);
          expect(split.objects?.map((o) => [o.kind, Buffer.from(o.bytes)])).toEqual(
            reference.objects?.map((o) => [o.kind, Buffer.from(o.bytes)]),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps the records before a truncated one, and reports it', () => {
    const a = objectRecord(RecordKind.ObjectSend, 1);
    const b = objectRecord(RecordKind.ObjectReply, 2);
    const frame = joinRecords([a, b]).subarray(0, a.length + b.length - 3);
    const decoded = decodeRecords(frame, true);
    expect(decoded.objects?.map((o) => Buffer.from(o.bytes))).toEqual([Buffer.from(a)]);
    expect(decoded.malformed).toHaveLength(1);
  });
});

describe('msgpackValueEnd', () => {
  it('finds where any value ends, and -1 for one cut short (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.uint8Array({ maxLength: 300 }), (value, bin) => {
        const bytes = encodePayload([value, bin, { k: [value] }]);
        expect(msgpackValueEnd(bytes, 0)).toBe(bytes.length);
        if (bytes.length > 1) expect(msgpackValueEnd(bytes.subarray(0, bytes.length - 1), 0)).toBe(-1);
        const two = joinRecords([bytes, bytes]);
        expect(msgpackValueEnd(two, bytes.length)).toBe(two.length);
      }),
      { numRuns: 300 },
    );
  });

  it('walking plainly, stops at an ext (whose reading msgpackr may stretch past its bytes) or 0xc1', () => {
    const plain = encodePayload([1, 'a', { b: [2] }]);
    expect(msgpackValueEnd(plain, 0, true)).toBe(plain.length);
    for (const hidden of [[0xd4, 0x72, 0x00], [0xd6, 0x62, 0, 0, 0, 0], [0xc7, 1, 5, 0], [0xc1]]) {
      const bytes = Uint8Array.from([0x93, 0x01, ...hidden, 0x02]);
      expect(msgpackValueEnd(bytes, 0, true)).toBe(-1);
      if (hidden[0] !== 0xc1) expect(msgpackValueEnd(bytes, 0)).toBe(bytes.length);
    }
  });
});
