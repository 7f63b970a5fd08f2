import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  RecordKind,
  WIRE_VERSION,
  decodeFrame,
  encodePayload,
  joinRecords,
} from '../../../../lib/core/index.js';
import {
  type MessageFollowRecord,
  decodeObjectRecord,
  encodeMessageFollow,
} from '../../../../lib/spot/wire/index.js';

/**
 * The messageFollow notice (record 50): the msgpack of its record array, read back to what was
 * written, fields a later version appends ignored, a short or mistyped one refused with a reason, and
 * carried to the object layer by the frame decoder like the other object records.
 */

const name = fc.string({ minLength: 1, maxLength: 40 });
const count = fc.oneof(fc.nat(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
const run = fc.record({ rid: name, nodeGeneration: fc.string({ maxLength: 24 }) });
const fences = fc.record({
  owner: run,
  objectGeneration: count,
  authorityOwnerGeneration: count,
  ownerLeaseGeneration: count,
});
const notice = fc.record({
  objectKind: fc.constantFrom('spot' as const, 'actor' as const),
  id: name,
  source: fences,
  target: fences,
  hops: count,
  queued: count,
  operationId: name,
  replyRoute: fc.option(fc.record({ correlation: fc.integer({ min: 1, max: 2 ** 32 }), origin: run }), {
    nil: undefined,
  }),
});

const fenceArray = (f: MessageFollowRecord['source']): unknown[] => [
  f.owner.rid,
  f.owner.nodeGeneration,
  f.objectGeneration,
  f.authorityOwnerGeneration,
  f.ownerLeaseGeneration,
];
const items = (n: Omit<MessageFollowRecord, 'kind'>): unknown[] => [
  WIRE_VERSION,
  RecordKind.MessageFollow,
  n.objectKind,
  n.id,
  fenceArray(n.source),
  fenceArray(n.target),
  n.hops,
  n.queued,
  n.operationId,
  n.replyRoute
    ? [n.replyRoute.correlation, n.replyRoute.origin.rid, n.replyRoute.origin.nodeGeneration]
    : null,
];
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('messageFollow records', () => {
  it('are the msgpack of the record array and read back to what was written (property)', () => {
    fc.assert(
      fc.property(notice, (n) => {
        const bytes = encodeMessageFollow(n);
        expect(hex(bytes)).toBe(hex(encodePayload(items(n))));
        expect(decodeObjectRecord(bytes)).toEqual({ kind: RecordKind.MessageFollow, ...n });
      }),
      { numRuns: 200 },
    );
  });

  it('fields a later version appends are ignored', () => {
    const n = fc.sample(notice, { numRuns: 1, seed: 7 })[0] as Omit<MessageFollowRecord, 'kind'>;
    expect(decodeObjectRecord(encodePayload([...items(n), 'later', 1]))).toEqual({
      kind: RecordKind.MessageFollow,
      ...n,
    });
  });

  it('a short or mistyped notice is refused with a reason, never thrown', () => {
    const n = fc.sample(notice, { numRuns: 1, seed: 3 })[0] as Omit<MessageFollowRecord, 'kind'>;
    const good = items(n);
    const spoil = (at: number, value: unknown): unknown[] => good.map((v, i) => (i === at ? value : v));
    for (const bad of [
      good.slice(0, 9),
      spoil(2, 'room'),
      spoil(3, ''),
      spoil(4, ['rid']),
      spoil(5, null),
      spoil(6, -1),
      spoil(7, 1.5),
      spoil(8, 7),
      spoil(9, [0, 'rid', 'gen']),
      spoil(9, [1, 'rid']),
      spoil(9, 'route'),
    ])
      expect(decodeObjectRecord(encodePayload(bad))).toBe('malformed messageFollow record');
  });

  it('the frame decoder hands a notice to the object layer, not to channel handlers', () => {
    const n = fc.sample(notice, { numRuns: 1, seed: 5 })[0] as Omit<MessageFollowRecord, 'kind'>;
    const frame = decodeFrame(joinRecords([encodeMessageFollow(n)]), true);
    expect(frame.records).toHaveLength(0);
    expect(frame.objects?.map((o) => o.kind)).toEqual([RecordKind.MessageFollow]);
    const withoutObjects = decodeFrame(joinRecords([encodeMessageFollow(n)]), false);
    expect(withoutObjects.malformed[0]?.reason).toMatch(/MessageFollow/);
  });
});
