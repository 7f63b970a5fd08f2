import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { pack } from 'msgpackr';
import { MsgpackReader } from '../../../../lib/core/index.js';

/**
 * The hand reader's strings: a field that repeats from record to record hands back the string it read
 * before, and any byte that differs, anywhere in it, reads as the new string.
 */

const ascii = fc.string({
  minLength: 1,
  maxLength: 40,
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
});

describe('MsgpackReader strings', () => {
  it('each slot reads what the bytes say, record after record, whatever it read before (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(ascii, ascii), { minLength: 1, maxLength: 20 }), (records) => {
        const reader = new MsgpackReader();
        for (const [a, b] of records) {
          const bytes = pack([a, b]);
          reader.reset(bytes, 1);
          expect([reader.asciiStr(0), reader.asciiStr(1)]).toEqual([a, b]);
          expect(reader.atEnd).toBe(true);
          reader.reset(pack([a]), 1);
          expect(reader.asciiFixstr() ?? a).toBe(a);
        }
      }),
    );
  });

  it('one byte changed at either end or inside reads as the new string; a non-ASCII one is not read', () => {
    const reader = new MsgpackReader();
    for (const s of ['op-100', 'op-101', 'xp-101', 'op-x01', 'op-101']) {
      expect(reader.reset(pack(s), 0).asciiStr(3)).toBe(s);
      expect(reader.reset(pack(s), 0).asciiFixstr()).toBe(s);
    }
    expect(reader.reset(pack('op-1é1'), 0).asciiStr(3)).toBeUndefined();
    expect(reader.reset(pack('op-1é1'), 0).asciiFixstr()).toBeUndefined();
  });
});
