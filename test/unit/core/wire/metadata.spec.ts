import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  EMPTY_METADATA,
  METADATA_MAX_BYTES,
  MetadataBuilder,
  ZLinkError,
  decodeMetadata,
  encodeMetadata,
  encodedMetadataSize,
  metadataFromRecord,
} from '../../../../lib/core/index.js';

/** Contract: docs/protocol.md#metadata (UTF-8 without NUL, ≤ 1024 encoded bytes, last value wins, frozen). */

/** Entries `{ k: 'x' * n }` whose encoded size is exactly `target`. */
function entriesOfSize(target: number): Map<string, string> {
  for (let n = 0; n <= target; n++) {
    const entries = new Map([['k', 'x'.repeat(n)]]);
    if (encodedMetadataSize(entries) === target) return entries;
  }
  throw new Error(`no single-entry metadata of exactly ${target} bytes`);
}

function expectInvalidArgument(fn: () => unknown, messagePart?: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(ZLinkError);
  expect((thrown as ZLinkError).code).toBe('InvalidArgument');
  if (messagePart !== undefined) expect((thrown as ZLinkError).message).toContain(messagePart);
}

function decodeOk(bytes: Uint8Array | undefined): Readonly<Record<string, string>> {
  const r = decodeMetadata(bytes);
  if (!r.ok) throw new Error(`decode failed: ${r.reason}`);
  return r.metadata;
}

/** Raw wire form: uvarint(len) bytes, per key and value (single-byte lengths only). */
function raw(...parts: (string | number[])[]): Uint8Array {
  const out: number[] = [];
  for (const p of parts) {
    const b = typeof p === 'string' ? [...Buffer.from(p, 'utf8')] : p;
    out.push(b.length, ...b);
  }
  return Uint8Array.from(out);
}

describe('metadata size (at most 1024 encoded bytes including structure)', () => {
  it('metadata of exactly 1024 encoded bytes is accepted and round-trips', () => {
    const entries = entriesOfSize(METADATA_MAX_BYTES);
    const bytes = encodeMetadata(entries);
    expect(bytes.length).toBe(1024);
    expect(decodeOk(bytes)).toEqual(Object.fromEntries(entries));
  });

  it('metadata of 1025 encoded bytes is refused with InvalidArgument', () => {
    const entries = entriesOfSize(METADATA_MAX_BYTES + 1);
    expect(encodedMetadataSize(entries)).toBe(1025);
    expectInvalidArgument(() => encodeMetadata(entries), '1025');
    const builder = new MetadataBuilder();
    for (const [k, v] of entries) builder.set(k, v);
    expectInvalidArgument(() => builder.encode());
  });

  it('the size counts structure: many small entries summing to 1025 bytes are refused', () => {
    // 'kNNN' → 1+4 bytes, 'v' → 1+1 bytes: 7 bytes per entry.
    const entries = new Map<string, string>();
    for (let i = 0; i < 146; i++) entries.set(`k${String(i).padStart(3, '0')}`, 'v');
    expect(encodedMetadataSize(entries)).toBe(1022);
    expect(encodeMetadata(entries).length).toBe(1022);
    entries.set('a', 'b'); // +4 → 1026
    expectInvalidArgument(() => encodeMetadata(entries));
  });

  it('multi-byte UTF-8 counts as bytes, not characters', () => {
    expect(encodedMetadataSize([['키', '값🎮']])).toBe(1 + 3 + 1 + 7);
  });

  it('decoding refuses more than 1024 bytes without throwing', () => {
    const big = new Uint8Array(1025);
    const r = decodeMetadata(big);
    expect(r.ok).toBe(false);
  });
});

describe('metadata text (UTF-8 without NUL)', () => {
  it.each([
    ['NUL in a key', 'ten\0ant', 'v'],
    ['NUL in a value', 'tenant', 'a\0b'],
    ['a lone high surrogate in a key', 'k\uD800', 'v'],
    ['a lone low surrogate in a value', 'k', '\uDC00x'],
  ])('%s is refused on encode with InvalidArgument', (_name, key, value) => {
    expectInvalidArgument(() => encodeMetadata(new Map([[key, value]])));
    expectInvalidArgument(() => metadataFromRecord({ [key]: value }));
  });

  it('a non-string value is refused with InvalidArgument', () => {
    expectInvalidArgument(() => encodeMetadata(new Map([['k', 42 as unknown as string]])), "'k'");
  });

  it.each([
    ['invalid UTF-8 in a value (lone 0xFF)', raw('k', [0xff])],
    ['invalid UTF-8 in a key (overlong encoding of "/")', raw([0xc0, 0xaf], 'v')],
    ['an encoded surrogate (CESU-8 0xED 0xA0 0x80)', raw('k', [0xed, 0xa0, 0x80])],
    ['a truncated multi-byte sequence', raw('k', [0xe2, 0x82])],
    ['NUL inside a key', raw([0x61, 0x00], 'v')],
    ['NUL inside a value', raw('k', [0x00])],
  ])('decode refuses %s (ok:false, never throws)', (_name, bytes) => {
    const r = decodeMetadata(bytes);
    expect(r.ok).toBe(false);
  });
});

describe('metadata decoding of truncated bytes', () => {
  it('every strict prefix of a valid encoding that cuts an entry is refused', () => {
    const bytes = metadataFromRecord({
      'tenant-id': 'tenant-42',
      locale: 'ko-KR',
      ['x'.repeat(200)]: 'long key',
    });
    if (bytes === undefined) throw new Error('expected bytes');
    // Entry boundaries are the only prefixes that are themselves valid metadata.
    const boundaries = new Set([0, 1 + 9 + 1 + 9, 1 + 9 + 1 + 9 + 1 + 6 + 1 + 5]);
    let refused = 0;
    for (let len = 1; len < bytes.length; len++) {
      const r = decodeMetadata(bytes.subarray(0, len));
      if (boundaries.has(len)) {
        expect(r.ok).toBe(true);
      } else {
        expect([len, r.ok]).toEqual([len, false]);
        refused++;
      }
    }
    expect(refused).toBe(bytes.length - 3);
  });

  it('a length prefix whose continuation bit runs off the end is refused', () => {
    expect(decodeMetadata(Uint8Array.from([0x80])).ok).toBe(false);
    expect(decodeMetadata(Uint8Array.from([0x01, 0x61, 0xff, 0xff])).ok).toBe(false);
  });

  it('random bytes never make decodeMetadata throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const r = decodeMetadata(bytes);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 3000 },
    );
  });
});

describe('metadata semantics', () => {
  it('setting the same key twice sends the last value', () => {
    const builder = new MetadataBuilder();
    builder.set('tenant-id', 'first');
    builder.set('locale', 'ko-KR');
    builder.set('tenant-id', 'second');
    expect(decodeOk(builder.encode())).toEqual({ 'tenant-id': 'second', locale: 'ko-KR' });
  });

  it('a repeated key on the wire decodes to its last value', () => {
    expect(decodeOk(raw('k', 'one', 'j', 'x', 'k', 'two'))).toEqual({ k: 'two', j: 'x' });
  });

  it('the decoded snapshot is frozen and writes to it throw in strict mode', () => {
    const md = decodeOk(metadataFromRecord({ 'tenant-id': 't1' }));
    expect(Object.isFrozen(md)).toBe(true);
    expect(() => {
      (md as Record<string, string>)['tenant-id'] = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (md as Record<string, string>)['new-key'] = 'added';
    }).toThrow(TypeError);
    expect(() => {
      delete (md as Record<string, string>)['tenant-id'];
    }).toThrow(TypeError);
    expect(md['tenant-id']).toBe('t1');
  });

  it('the empty snapshot is frozen too', () => {
    expect(decodeOk(undefined)).toBe(EMPTY_METADATA);
    expect(decodeOk(new Uint8Array(0))).toBe(EMPTY_METADATA);
    expect(Object.isFrozen(EMPTY_METADATA)).toBe(true);
    expect(Object.keys(EMPTY_METADATA)).toEqual([]);
  });

  it('a key named like an Object.prototype member is plain data', () => {
    const md = decodeOk(metadataFromRecord({ ['__proto__']: 'p', constructor: 'c', toString: 's' }));
    expect(Object.keys(md).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(md['__proto__']).toBe('p');
    expect(md.toString).toBe('s');
  });

  it('empty metadata encodes to undefined', () => {
    expect(new MetadataBuilder().encode()).toBeUndefined();
    expect(new MetadataBuilder().isEmpty).toBe(true);
    expect(metadataFromRecord({})).toBeUndefined();
  });

  it('round trip of unicode keys and values', () => {
    const record = { 테넌트: '서울-42', ключ: 'значение', '🎮': '👾 game', ascii: '', 'emoji✓': 'ÿ€𝄞' };
    expect(decodeOk(metadataFromRecord(record))).toEqual(record);
  });

  it('round trip of arbitrary well-formed strings (property)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => !s.includes('\0'));
    fc.assert(
      fc.property(fc.dictionary(text, text, { maxKeys: 8 }), (record) => {
        const bytes = metadataFromRecord(record);
        if (Object.keys(record).length === 0) {
          expect(bytes).toBeUndefined();
          return;
        }
        expect(bytes?.length).toBe(encodedMetadataSize(Object.entries(record)));
        expect({ ...decodeOk(bytes) }).toEqual({ ...record });
      }),
      { numRuns: 500 },
    );
  });
});
