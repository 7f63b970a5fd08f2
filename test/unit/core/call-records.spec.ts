import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  type CallLayout,
  MESH_REQUEST_LAYOUT,
  MESH_SEND_LAYOUT,
  REQUEST_LAYOUT,
  SEND_LAYOUT,
  encodeCall,
} from '../../../lib/core/call-records.js';
import {
  WIRE_VERSION,
  decodeFrame,
  decodeRecords,
  encodeFrameworkFields,
  encodePayload,
} from '../../../lib/core/index.js';

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
          const record = encodeCall(l, id, channel, packet, metadata, payload, fields);
          const items: unknown[] = [WIRE_VERSION, l.kind];
          if (l.correlated) items.push(id);
          if (l.scoped) items.push(channel ?? null);
          items.push(packet, metadata ?? null, payload);
          if (fields) items.push({ tp: '00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01', ts: 'k=v' });
          expect(hex(record)).toBe(hex(encodePayload(items)));
          const fast = decodeFrame(record);
          const slow = decodeRecords(record);
          expect(fast).toEqual(slow);
          expect(slow.malformed).toEqual([]);
          expect(slow.records[0]).toMatchObject({ kind: l.kind, packet, metadata, payload });
          if (l.correlated) expect(slow.records[0]).toMatchObject({ correlation: id });
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
      const record = encodeCall(l, 5, 'ch', 'p', payload, payload, undefined);
      const items = [WIRE_VERSION, l.kind, ...(l.correlated ? [5] : []), ...(l.scoped ? ['ch'] : []), 'p'];
      expect(hex(record)).toBe(hex(encodePayload([...items, payload, payload])));
      expect(decodeFrame(record).records[0]).toMatchObject({ packet: 'p' });
    }
  });

  it('a record short of its payload is refused, keeping a request correlation', () => {
    const record = encodeCall(l, 9, 'ch', 'p', undefined, Uint8Array.of(1), undefined);
    const items = [
      WIRE_VERSION,
      l.kind,
      ...(l.correlated ? [9] : []),
      ...(l.scoped ? ['ch'] : []),
      'p',
      null,
    ];
    const decoded = decodeFrame(encodePayload(items));
    expect(decoded.records).toEqual([]);
    expect(decoded.malformed).toEqual([
      l.correlated
        ? { reason: expect.stringMatching(/malformed/), correlation: 9 }
        : { reason: expect.stringMatching(/malformed/) },
    ]);
    expect(decodeFrame(record).malformed).toEqual([]);
  });
});
