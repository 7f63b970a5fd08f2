import { Buffer } from 'node:buffer';
import { describe, expect, it } from '@jest/globals';
import { HandedBytes, takeChunk } from '../../../../lib/transport/stream/handed-bytes.js';

/** What zeromq may still hold of a connection's writes, and how the listener cuts its writes. */

const bytes = (...values: number[]): Buffer => Buffer.from(values);

describe('HandedBytes: the last hwm + 1 accepted writes', () => {
  it('sums the sizes of the last hwm + 1 writes', () => {
    const handed = new HandedBytes(2);
    handed.accepted(10);
    handed.accepted(20);
    expect(handed.bytes).toBe(30);
    handed.accepted(30);
    expect(handed.bytes).toBe(60);
    // The fourth write replaces the first: zeromq holds at most three messages (2 queued, 1 writing).
    handed.accepted(5);
    expect(handed.bytes).toBe(55);
    handed.accepted(0);
    handed.accepted(0);
    expect(handed.bytes).toBe(5);
  });

  it('starts at 0 and never goes below it', () => {
    const handed = new HandedBytes(16);
    expect(handed.bytes).toBe(0);
    for (let i = 0; i < 40; i++) handed.accepted(i % 3 === 0 ? 0 : 1000);
    for (let i = 0; i < 17; i++) handed.accepted(0);
    expect(handed.bytes).toBe(0);
  });
});

describe('takeChunk', () => {
  it('takes whole buffers joined, in order, up to max', () => {
    const out = [bytes(1, 2), bytes(3), bytes(4, 5, 6)];
    expect([...takeChunk(out, 3)]).toEqual([1, 2, 3]);
    expect(out.map((b) => [...b])).toEqual([[4, 5, 6]]);
  });

  it('cuts a buffer in two and leaves its tail first', () => {
    const out = [bytes(1, 2, 3, 4, 5), bytes(6)];
    expect([...takeChunk(out, 2)]).toEqual([1, 2]);
    expect([...takeChunk(out, 2)]).toEqual([3, 4]);
    expect([...takeChunk(out, 2)]).toEqual([5, 6]);
    expect(out).toEqual([]);
  });

  it('takes all when out holds fewer than max bytes', () => {
    const out = [bytes(1), bytes(2)];
    expect([...takeChunk(out, 100)]).toEqual([1, 2]);
    expect(out).toEqual([]);
  });

  it('a lone buffer is returned as it is (no copy)', () => {
    const b = bytes(1, 2, 3);
    const out = [b];
    expect(takeChunk(out, 10)).toBe(b);
  });

  it('never joins an empty buffer: it is dropped, the bytes around it go in order', () => {
    // An empty zeromq message closes a STREAM connection: it must never ride inside data.
    const out = [bytes(1, 2), Buffer.alloc(0), bytes(3), Buffer.alloc(0)];
    const chunk = takeChunk(out, 10);
    expect([...chunk]).toEqual([1, 2, 3]);
    expect(out).toEqual([]);
  });

  it('returns an empty buffer only when out holds no byte (the caller writes nothing)', () => {
    const out = [Buffer.alloc(0), Buffer.alloc(0)];
    expect(takeChunk(out, 10).length).toBe(0);
    expect(out).toEqual([]);
    expect(takeChunk([], 10).length).toBe(0);
  });

  it('splitting many frames keeps every byte once, in order', () => {
    const frames = Array.from({ length: 50 }, (_, i) => Buffer.alloc((i * 37) % 101, i));
    const whole = Buffer.concat(frames);
    const out = [...frames];
    const chunks: Buffer[] = [];
    while (out.length > 0) {
      const c = takeChunk(out, 64);
      expect(c.length).toBeLessThanOrEqual(64);
      if (c.length > 0) chunks.push(c);
    }
    expect(Buffer.concat(chunks).equals(whole)).toBe(true);
  });
});
