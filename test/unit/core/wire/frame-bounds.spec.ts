import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  MAX_FRAME_RECORDS,
  MAX_FRAME_VALUES,
  RecordKind,
  decodeFrame,
  encodePayload,
  encodeReply,
  MAX_PAYLOAD_VALUES,
  WIRE_VERSION,
  decodeFanoutBeacon,
  decodePayload,
  encodeRequest,
  readFanoutEvents,
} from '../../../../lib/core/index.js';
import { packr } from '../../../../lib/core/wire/codec.js';
import { countMsgpackValues } from '../../../../lib/core/wire/msgpack-scan.js';

/**
 * Regression (found by the frame fuzz, test/fuzz): the decoder read every msgpack value of a frame,
 * so one 63 MB frame of `0x90` bytes (63 million empty arrays) held the event loop for ~40 s, grew
 * the heap past 6 GB and aborted the process (V8 out of memory); 63 MB nested in one record took
 * 4 GB. Listeners and MeshNodes accept frames up to 64 MB. Now one frame decodes at most
 * `MAX_FRAME_VALUES` values and reads at most `MAX_FRAME_RECORDS` records.
 */
describe('one frame bounds what the decoder does', () => {
  const BIG = 63 * 1024 * 1024;

  it('a 63 MB frame of one-byte values is one malformed record, not 66 million (it used to abort the process)', () => {
    for (const fill of [0x90, 0x80, 0xc0]) {
      const decoded = decodeFrame(Buffer.alloc(BIG, fill));
      expect(decoded.records).toEqual([]);
      expect(decoded.malformed).toEqual([{ reason: `frame: more than ${MAX_FRAME_VALUES} msgpack values` }]);
    }
  });

  it('one record nesting 63 million values is one malformed record', () => {
    const frame = Buffer.alloc(BIG, 0x80);
    frame[0] = 0xdd; // array 32 of everything after it
    frame.writeUInt32BE(BIG - 5, 1);
    expect(decodeFrame(frame)).toEqual({
      records: [],
      malformed: [{ reason: `frame: more than ${MAX_FRAME_VALUES} msgpack values` }],
    });
  });

  it(`at most ${MAX_FRAME_RECORDS} records are read from one frame; the ones read are kept`, () => {
    const replies = (n: number) =>
      Buffer.concat(Array.from({ length: n }, (_, i) => Buffer.from(encodeReply(i + 1, encodePayload(i)))));
    const exact = decodeFrame(replies(MAX_FRAME_RECORDS));
    expect(exact.records).toHaveLength(MAX_FRAME_RECORDS);
    expect(exact.malformed).toEqual([]);
    const over = decodeFrame(replies(MAX_FRAME_RECORDS + 10));
    expect(over.records).toHaveLength(MAX_FRAME_RECORDS);
    expect(over.records.at(-1)).toMatchObject({ kind: RecordKind.Reply, correlation: MAX_FRAME_RECORDS });
    expect(over.malformed).toEqual([
      { reason: `frame: more than ${MAX_FRAME_RECORDS} records; the rest was not read` },
    ]);
  });

  it('large frames whose bytes are payloads decode as before (bin bodies are skipped, not counted)', () => {
    const payload = Buffer.alloc(8 * 1024 * 1024, 0x90); // 8 MB of bytes that would be values outside a bin
    const one = decodeFrame(encodeRequest(7, 'upload', undefined, payload));
    expect(one.malformed).toEqual([]);
    expect(one.records[0]).toMatchObject({ kind: RecordKind.Request, correlation: 7, packet: 'upload' });
    const batch = decodeFrame(
      Buffer.concat(
        Array.from({ length: 512 }, (_, i) => Buffer.from(encodeReply(i + 1, Buffer.alloc(4096, 0xc0)))),
      ),
    );
    expect(batch.records).toHaveLength(512);
    expect(batch.malformed).toEqual([]);
  });
});

describe('countMsgpackValues', () => {
  /** Every value once: containers, their items, map keys. */
  function naive(value: unknown): number {
    if (Array.isArray(value)) return 1 + value.reduce((n: number, v) => n + naive(v), 0);
    if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
      return 1 + Object.entries(value).reduce((n, [, v]) => n + 1 + naive(v), 0);
    }
    return 1;
  }

  it('counts what msgpackr wrote, nested values and map keys included (property)', () => {
    const value = fc.oneof(
      fc.jsonValue(),
      fc.uint8Array({ maxLength: 300 }),
      fc.array(fc.oneof(fc.string({ maxLength: 70000 }), fc.uint8Array({ maxLength: 70000 }), fc.double()), {
        maxLength: 3,
      }),
    );
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 5 }), (values) => {
        const bytes = Buffer.concat(values.map((v) => Buffer.from(packr.pack(v))));
        const total = values.reduce((n: number, v) => n + naive(v), 0);
        expect(countMsgpackValues(bytes, Number.MAX_SAFE_INTEGER)).toBe(total);
      }),
      { numRuns: 300 },
    );
  });

  it('stops once past the limit, and at bytes that run past the end', () => {
    expect(countMsgpackValues(Buffer.alloc(100, 0xc0), 10)).toBe(11);
    expect(countMsgpackValues(Uint8Array.of(0xc6, 0xff, 0xff), 10)).toBe(1);
    expect(countMsgpackValues(Uint8Array.of(0xdb, 0, 0, 0, 9, 0x61), 10)).toBe(1);
    expect(countMsgpackValues(Uint8Array.of(), 10)).toBe(0);
  });
});

describe('a fanout frame has the same bounds (readFanoutEvents)', () => {
  it('a 63 MB frame of one-byte values is one malformed report, and records past the cap are not read', () => {
    const reasons: string[] = [];
    let events = 0;
    readFanoutEvents(
      Buffer.alloc(63 * 1024 * 1024, 0x90),
      () => events++,
      (reason) => reasons.push(reason),
    );
    expect(events).toBe(0);
    expect(reasons).toEqual([`frame: more than ${MAX_FRAME_VALUES} msgpack values`]);

    reasons.length = 0;
    readFanoutEvents(
      Buffer.alloc(MAX_FRAME_RECORDS + 10, 0x01), // positive fixints: values, not fanout events
      () => events++,
      (reason) => reasons.push(reason),
    );
    expect(events).toBe(0);
    expect(reasons).toHaveLength(MAX_FRAME_RECORDS + 1);
    expect(reasons[0]).toBe(`frame: more than ${MAX_FRAME_RECORDS} records; the rest was not read`);
  });
});

describe('what lies inside one record is bounded too', () => {
  it('a payload of millions of one-byte values is a decode failure, not millions of objects', () => {
    const n = MAX_PAYLOAD_VALUES + 8;
    const payload = Buffer.alloc(5 + n, 0x90);
    payload[0] = 0xdd; // array 32 of n empty arrays
    payload.writeUInt32BE(n, 1);
    expect(decodePayload(payload)).toEqual({
      ok: false,
      reason: `payload: more than ${MAX_PAYLOAD_VALUES} msgpack values`,
    });
    // A large payload of few values (bytes, a long string) decodes as before.
    const blob = decodePayload(packr.pack({ blob: Buffer.alloc(MAX_PAYLOAD_VALUES + 8, 0x90) }));
    expect(blob.ok).toBe(true);
  });

  it('the fanout fast reader stops after the record cap; a beacon frame over 4 KiB is not decoded', () => {
    const one = Buffer.from(packr.pack([WIRE_VERSION, RecordKind.FanoutEvent, 1, 'p', Buffer.alloc(0)]));
    let events = 0;
    const reasons: string[] = [];
    readFanoutEvents(
      Buffer.concat(Array.from({ length: MAX_FRAME_RECORDS + 5 }, () => one)),
      () => events++,
      (r) => reasons.push(r),
    );
    expect(events).toBe(MAX_FRAME_RECORDS);
    expect(reasons).toEqual([`frame: more than ${MAX_FRAME_RECORDS} records; the rest was not read`]);
    expect(decodeFanoutBeacon(Buffer.alloc(64 * 1024, 0x90))).toBe('beacon of 65536 bytes (at most 4096)');
  });
});
