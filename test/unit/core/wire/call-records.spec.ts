import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  type CallLayout,
  MESH_REQUEST_LAYOUT,
  MESH_ROUTED_REQUEST_LAYOUT,
  MESH_SEND_LAYOUT,
  REQUEST_LAYOUT,
  SEND_LAYOUT,
  encodeCall,
} from '../../../../lib/core/wire/call-records.js';
import {
  RecordKind,
  WIRE_VERSION,
  decodeFrame,
  decodeRecords,
  encodeFrameworkFields,
  encodeMeshRoutedRequest,
  encodePayload,
  joinRecords,
} from '../../../../lib/core/index.js';

/**
 * One implementation writes and reads the sends and requests of every topology: for each layout
 * the bytes are what msgpackr writes for the record array, and both decoders (the fast path and
 * msgpackr) read them back to the same record.
 */

const LAYOUTS: [string, CallLayout][] = [
  ['Send', SEND_LAYOUT],
  ['Request', REQUEST_LAYOUT],
  ['MeshSend', MESH_SEND_LAYOUT],
  ['MeshRequest', MESH_REQUEST_LAYOUT],
  ['MeshRoutedRequest', MESH_ROUTED_REQUEST_LAYOUT],
];

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const name = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('c'.repeat(31), 'c'.repeat(32), '한'.repeat(20)),
);
// Every bin header form (8, 16, 32 bit lengths); the large ones only as bytes, not compared deeply.
const bin = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.constantFrom(new Uint8Array(0xff), new Uint8Array(0x100)),
);
const correlation = fc.oneof(
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 2 ** 32 - 1, 2 ** 32),
);
const trace = encodeFrameworkFields('00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01', 'k=v');

/** The record array `l` stands for, up to the packet. */
function head(l: CallLayout, id: number, channel: string | undefined): unknown[] {
  const items: unknown[] = [WIRE_VERSION, l.kind];
  if (l.correlated) items.push(id);
  if (l.routed) items.push('node-origin');
  if (l.scoped) items.push(channel ?? null);
  return items;
}

describe.each(LAYOUTS)('%s through encodeCall', (_name, l) => {
  it('is byte for byte the msgpackr record array, and reads back alike on both paths (property)', () => {
    fc.assert(
      fc.property(
        correlation,
        fc.option(name, { nil: undefined }),
        name,
        fc.option(bin, { nil: undefined }),
        bin,
        fc.boolean(),
        (id, channel, packet, metadata, payload, traced) => {
          const fields = traced ? trace : undefined;
          const record = encodeCall(l, id, 'node-origin', channel, packet, metadata, payload, fields);
          const items = [...head(l, id, channel), packet, metadata ?? null, payload];
          if (fields) items.push({ tp: '00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01', ts: 'k=v' });
          expect(hex(record)).toBe(hex(encodePayload(items)));
          const fast = decodeFrame(record);
          const slow = decodeRecords(record);
          expect(fast).toEqual(slow);
          expect(slow.malformed).toEqual([]);
          expect(slow.records[0]).toMatchObject({ kind: l.kind, packet, metadata, payload });
          if (l.correlated) expect(slow.records[0]).toMatchObject({ correlation: id });
          if (l.routed) expect(slow.records[0]).toMatchObject({ origin: 'node-origin' });
          if (l.scoped) expect(slow.records[0]).toMatchObject({ channel });
          else expect(slow.records[0]).not.toHaveProperty('channel');
        },
      ),
      { numRuns: 100 },
    );
  });

  it('payloads of every bin header size are the msgpackr bytes', () => {
    for (const size of [0, 0xff, 0x100, 0xffff, 0x10000]) {
      const payload = new Uint8Array(size).fill(7);
      const record = encodeCall(l, 5, 'node-origin', 'ch', 'p', payload, payload, undefined);
      expect(hex(record)).toBe(hex(encodePayload([...head(l, 5, 'ch'), 'p', payload, payload])));
      expect(decodeFrame(record).records[0]).toMatchObject({ packet: 'p' });
    }
  });

  it('a record short of its payload is refused, keeping the correlation of a request answered to the previous hop', () => {
    const decoded = decodeFrame(encodePayload([...head(l, 9, 'ch'), 'p', null]));
    expect(decoded.records).toEqual([]);
    const reason = expect.stringMatching(/malformed/);
    // A routed request's correlation is its origin's: no decode error goes to the previous hop.
    const expected = l.correlated && !l.routed ? { reason, correlation: 9 } : { reason };
    expect(decoded.malformed).toEqual([expected]);
  });
});

describe('a routed request (its reply route travels with it)', () => {
  const payload = encodePayload({ n: 1 });

  it('round-trips origin and correlation, through a batch too', () => {
    const frame = joinRecords([
      encodeMeshRoutedRequest(41, 'node-a', 'match', 'm.join', Uint8Array.of(1), payload, trace),
      encodeMeshRoutedRequest(2 ** 40, 'node-b', undefined, 'cmd', undefined, payload),
    ]);
    const { records, malformed } = decodeFrame(frame);
    expect(malformed).toEqual([]);
    expect(records).toEqual([
      {
        kind: RecordKind.MeshRoutedRequest,
        correlation: 41,
        origin: 'node-a',
        channel: 'match',
        packet: 'm.join',
        metadata: Buffer.of(1),
        payload: Buffer.from(payload),
        trace: { traceparent: expect.any(String), tracestate: 'k=v' },
      },
      expect.objectContaining({ correlation: 2 ** 40, origin: 'node-b', channel: undefined, packet: 'cmd' }),
    ]);
  });

  it.each<[string, unknown]>([
    ['an empty origin', ''],
    ['a numeric origin', 7],
    ['a nil origin', null],
  ])('with %s is refused, without a correlation to answer', (_what, origin) => {
    const record = [WIRE_VERSION, RecordKind.MeshRoutedRequest, 3, origin, null, 'p', null, payload];
    const decoded = decodeFrame(encodePayload(record));
    expect(decoded.records).toEqual([]);
    expect(decoded.malformed).toEqual([{ reason: expect.stringMatching(/routed request/) }]);
  });
});
