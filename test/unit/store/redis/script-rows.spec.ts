/**
 * `packScriptRows` (lib/store/redis/script-rows.ts): a batch's rows for the batch scripts, one msgpack array
 * of arrays of `str`, each header the smallest the length allows. Read back here by msgpackr (text only:
 * the saved bytes' round trip through Redis's `cmsgpack` is the State Store contract's, on a real Redis).
 */
import { describe, expect, it } from '@jest/globals';
import { Buffer } from 'node:buffer';
import { unpack } from 'msgpackr';
import { packScriptRows } from '../../../../lib/store/redis/script-rows.js';

describe('packScriptRows', () => {
  it('packs rows of text and bytes as arrays of str, at every header size', () => {
    const lengths = [0, 1, 31, 32, 255, 256, 65_535, 65_536];
    const row = lengths.map((n) => 'x'.repeat(n));
    const rows = Array.from({ length: 17 }, (_, i) =>
      i === 0 ? row : [`row ${i}`, Buffer.from(`bytes ${i}`)],
    );
    const packed = packScriptRows(rows);
    expect(unpack(packed)).toEqual(rows.map((r) => r.map((v) => (typeof v === 'string' ? v : v.toString()))));
    // 17 rows: an array16 header; the first row's 8 values: a fixarray.
    expect([packed[0], packed.readUInt16BE(1), packed[3]]).toEqual([0xdc, 17, 0x98]);
  });

  it('keeps bytes that are not UTF-8 as they are, and a row with no values', () => {
    const bytes = Uint8Array.from([0xff, 0x00, 0xc4, 0x80]);
    const packed = packScriptRows([[bytes], []]);
    expect([...packed]).toEqual([0x92, 0x91, 0xa4, 0xff, 0x00, 0xc4, 0x80, 0x90]);
  });
});
