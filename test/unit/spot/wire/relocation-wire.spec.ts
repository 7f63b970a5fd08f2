import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { pack, unpack } from 'msgpackr';
import {
  RecordKind,
  decodeFrame,
  decodePayload,
  encodePayload,
  joinRecords,
} from '../../../../lib/core/index.js';
import {
  ChunkAssembly,
  type RelocationChunkRecord,
  type RelocationImage,
  decodeObjectRecord,
  decodeRelocationImage,
  encodeObjectRequest,
  encodeRelocationChunks,
  encodeRelocationImage,
  encodeRelocationRelay,
} from '../../../../lib/spot/wire/index.js';

/**
 * A moving object's image (state, waiting turns, timers) and the chunk records that carry it: read
 * back to what was written, each chunk within its bound, reassembled in any order only when every
 * chunk is there once and the checksum holds; anything else fails the transfer with a reason.
 */

const name = fc.string({ minLength: 1, maxLength: 30 });
const count = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const fences = fc.record({
  owner: fc.record({ rid: name, nodeGeneration: fc.string({ maxLength: 16 }) }),
  objectGeneration: count,
  authorityOwnerGeneration: count,
  ownerLeaseGeneration: count,
});
const timer = fc.oneof(
  fc.record({
    kind: fc.constant('timeout' as const),
    label: fc.option(fc.string(), { nil: undefined }),
    dueInMs: count,
    intervalMs: fc.constant(undefined),
  }),
  fc.record({
    kind: fc.constant('interval' as const),
    label: fc.option(fc.string(), { nil: undefined }),
    dueInMs: count,
    intervalMs: count,
  }),
);
const image = fc.record({
  objectKind: fc.constantFrom('spot' as const, 'actor' as const),
  id: name,
  type: name,
  objectGeneration: count,
  source: fences,
  state: fc.option(fc.uint8Array({ maxLength: 300 }), { nil: undefined }),
  queued: fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { maxLength: 5 }),
  timers: fc.array(timer, { maxLength: 4 }),
  storeVersion: count,
  membership: fc.record({
    spot: fc.option(name, { nil: undefined }),
    members: fc.array(fc.tuple(name, count), { maxLength: 4 }),
  }),
  sessions: fc.array(
    fc.record({
      ownerRid: name,
      ownerGeneration: name,
      listener: name,
      sessionId: name,
      bindingGeneration: count,
    }),
    { maxLength: 3 },
  ),
  events: fc.array(fc.tuple(name, count), { maxLength: 3 }),
});

const chunkOf = (bytes: Uint8Array): RelocationChunkRecord =>
  decodeObjectRecord(bytes) as RelocationChunkRecord;

function assemble(chunks: Uint8Array[], maxBytes = 1 << 20) {
  const assembly = new ChunkAssembly('move-1', maxBytes);
  return chunks.map((c) => assembly.add(chunkOf(c)));
}

describe('relocation image and chunks', () => {
  it('an image reads back to what was written, a waiting request included (property)', () => {
    fc.assert(
      fc.property(image, (img) => {
        const decoded = decodeRelocationImage(encodeRelocationImage(img));
        expect(decoded).toEqual({
          ...img,
          state: img.state === undefined ? undefined : Buffer.from(img.state),
          queued: img.queued.map((q) => Buffer.from(q)),
        });
      }),
      { numRuns: 150 },
    );
    const waiting = encodeObjectRequest(
      7,
      { rid: 'caller', nodeGeneration: 'g' },
      {
        objectKind: 'spot',
        id: 'room-1',
        fences: {
          owner: { rid: 'a', nodeGeneration: 'ga' },
          objectGeneration: 1,
          authorityOwnerGeneration: 1,
          ownerLeaseGeneration: 1,
        },
      },
      'op-7',
      'chat',
      undefined,
      encodePayload('hi'),
    );
    const one = fc.sample(image, { numRuns: 1, seed: 1 })[0] as RelocationImage;
    const back = decodeRelocationImage(
      encodeRelocationImage({ ...one, queued: [waiting] }),
    ) as RelocationImage;
    expect(decodeObjectRecord(back.queued[0] as Uint8Array)).toMatchObject({
      kind: RecordKind.ObjectRequest,
      correlation: 7,
      origin: { rid: 'caller', nodeGeneration: 'g' },
      operationId: 'op-7',
    });
  });

  it('an image of a node that wrote no event places reads as none; a bad one is malformed', () => {
    const one = fc.sample(image, { numRuns: 1, seed: 3 })[0] as RelocationImage;
    const items = unpack(encodeRelocationImage(one)) as unknown[];
    expect((decodeRelocationImage(pack(items.slice(0, 11))) as RelocationImage).events).toEqual([]);
    expect(decodeRelocationImage(pack([...items.slice(0, 11), [['g', -1]]]))).toBe(
      'malformed relocation image',
    );
  });

  it('an image of a node that wrote no membership reads as no membership', () => {
    const one = fc.sample(image, { numRuns: 1, seed: 2 })[0] as RelocationImage;
    const items = unpack(encodeRelocationImage(one)) as unknown[];
    const back = decodeRelocationImage(pack(items.slice(0, 9))) as RelocationImage;
    expect(back.membership).toEqual({ spot: undefined, members: [] });
    expect(decodeRelocationImage(pack([...items.slice(0, 9), ['', []]]))).toBe('malformed relocation image');
  });

  it('chunks stay within their bound and reassemble in any order (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 2000 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 0, max: 1000 }),
        (bytes, chunkBytes, shuffleSeed) => {
          const chunks = encodeRelocationChunks('move-1', bytes, chunkBytes);
          expect(chunks.length).toBe(Math.max(1, Math.ceil(bytes.length / chunkBytes)));
          for (const c of chunks) expect(chunkOf(c).bytes.length).toBeLessThanOrEqual(chunkBytes);
          const order = chunks
            .map((c, i) => ({ c, k: (i * 7919 + shuffleSeed) % 104729 }))
            .sort((a, b) => a.k - b.k);
          const steps = assemble(order.map((o) => o.c));
          expect(steps.slice(0, -1).every((s) => s.tag === 'more')).toBe(true);
          const last = steps[steps.length - 1];
          expect(last?.tag).toBe('complete');
          expect(Buffer.from((last as { image: Uint8Array }).image)).toEqual(Buffer.from(bytes));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a duplicate, a foreign chunk, a corrupted byte or too large an image fails the transfer, for good', () => {
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => i);
    const chunks = encodeRelocationChunks('move-1', bytes, 30);
    expect(assemble([chunks[0] as Uint8Array, chunks[0] as Uint8Array])[1]).toEqual({
      tag: 'failed',
      reason: 'chunk 0 arrived twice',
    });
    const other = encodeRelocationChunks('move-2', bytes, 30);
    expect(assemble([other[0] as Uint8Array])[0]).toMatchObject({
      tag: 'failed',
      reason: /another relocation/,
    });
    const corrupt = encodeRelocationChunks('move-1', bytes, 30).map((c) => Buffer.from(c));
    const last = corrupt[3] as Buffer;
    last[last.length - 1] ^= 0xff;
    const steps = assemble(corrupt);
    expect(steps[3]).toEqual({ tag: 'failed', reason: 'the image does not match its checksum' });
    expect(assemble(chunks, 50)[1]).toMatchObject({ tag: 'failed', reason: /larger than 50 bytes/ });
    // After a failure nothing completes, the missing chunks included.
    const assembly = new ChunkAssembly('move-1', 1 << 20);
    assembly.add(chunkOf(chunks[0] as Uint8Array));
    assembly.add(chunkOf(chunks[0] as Uint8Array));
    expect(chunks.slice(1).map((c) => assembly.add(chunkOf(c)).tag)).toEqual(['failed', 'failed', 'failed']);
  });

  it('malformed chunks and images are refused with a reason, never thrown', () => {
    const pack = (items: unknown[]) => encodePayload(items);
    for (const bad of [
      [1, 66, 'm', 0, 1, 5],
      [1, 66, '', 0, 1, 5, new Uint8Array(1)],
      [1, 66, 'm', 1, 1, 5, new Uint8Array(1)],
      [1, 66, 'm', 0, 0, 5, new Uint8Array(1)],
      [1, 66, 'm', 0, 1, 2 ** 32, new Uint8Array(1)],
      [1, 66, 'm', 0, 1, 5, 'bytes'],
    ])
      expect(decodeObjectRecord(pack(bad))).toBe('malformed relocation chunk record');
    expect(decodeRelocationImage(Uint8Array.of(0xc1))).toMatch(/^malformed relocation image/);
    expect(decodeRelocationImage(pack(['spot', 'x']))).toBe('malformed relocation image');
    const good = fc.sample(image, { numRuns: 1, seed: 2 })[0] as RelocationImage;
    const read = decodePayload(encodeRelocationImage(good));
    const items = [...((read.ok ? read.value : []) as unknown[])];
    items[7] = [['interval', null, 5, null]];
    expect(decodeRelocationImage(pack(items))).toBe('malformed relocation image');
  });

  it('a chunk reaches the object layer, never a channel handler', () => {
    const [chunk] = encodeRelocationChunks('move-1', Uint8Array.of(1, 2, 3), 10);
    const frame = decodeFrame(joinRecords([chunk as Uint8Array]), true);
    expect(frame.records).toHaveLength(0);
    expect(frame.objects?.map((o) => o.kind)).toEqual([RecordKind.RelocationChunk]);
    expect(decodeFrame(joinRecords([chunk as Uint8Array]), false).malformed[0]?.reason).toMatch(
      /RelocationChunk/,
    );
  });

  it('a relay is the record msgpackr writes, any id and any record size, and reads back (property)', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.integer({ min: 0xff, max: 0x10001 }).map((n) => new Uint8Array(n).fill(7)),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }), bytes, (id, record) => {
        const relay = encodeRelocationRelay(id, record);
        expect(Buffer.from(relay).equals(pack([1, RecordKind.RelocationRelay, id, record]))).toBe(true);
        const read = decodeObjectRecord(relay) as { kind: number; relocationId: string; record: Uint8Array };
        expect([read.kind, read.relocationId]).toEqual([RecordKind.RelocationRelay, id]);
        expect(Buffer.from(read.record).equals(record)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
