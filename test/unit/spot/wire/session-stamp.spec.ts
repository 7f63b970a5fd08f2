import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  type SessionStamp,
  packSessionStamp,
  packStampHead,
  stampWithSequence,
} from '../../../../lib/spot/wire/index.js';

/**
 * A relay stamps its call with the session (docs/protocol.md#session-bindings): five of the stamp's six
 * items are its binding's, packed once (`packStampHead`); each relay adds its sequence number. The bytes
 * are the ones `packSessionStamp` writes for the whole stamp, whatever the strings and numbers.
 */
describe("a session stamp from its binding's head", () => {
  /** Strings of every header size msgpack has (fixstr, str 8, str 16) and of several UTF-8 widths. */
  const text = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ minLength: 250, maxLength: 300 }),
  );
  /** Sequences across every integer form: fixint, uint 8, 16, 32, and past 32 bits (float64). */
  const count = fc.oneof(
    fc.integer({ min: 0, max: 300 }),
    fc.integer({ min: 0, max: 0x1_0000_0000 + 5 }),
    fc.constantFrom(
      0x7f,
      0x80,
      0xff,
      0x100,
      0xffff,
      0x10000,
      0xffff_ffff,
      0x1_0000_0000,
      2 ** 40,
      2 ** 53 - 1,
    ),
  );

  it('is byte for byte what packSessionStamp writes (property)', () => {
    fc.assert(
      fc.property(
        text,
        text,
        text,
        text,
        count,
        count,
        (ownerRid, ownerGeneration, listener, sessionId, g, seq) => {
          const stamp: SessionStamp = {
            ownerRid,
            ownerGeneration,
            listener,
            sessionId,
            bindingGeneration: g,
            sequence: seq,
          };
          const bytes = stampWithSequence(packStampHead(stamp), seq);
          expect(Buffer.from(bytes).toString('hex')).toBe(
            Buffer.from(packSessionStamp(stamp)).toString('hex'),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('one head serves every relay of the binding: each stamp differs only in its sequence', () => {
    const binding = {
      ownerRid: 'gate-1',
      ownerGeneration: 'g1',
      listener: 'players',
      sessionId: 's-9',
      bindingGeneration: 4,
    };
    const head = packStampHead(binding);
    const before = Buffer.from(head).toString('hex');
    for (const sequence of [1, 2, 200, 70_000])
      expect(stampWithSequence(head, sequence)).toEqual(
        new Uint8Array(packSessionStamp({ ...binding, sequence })),
      );
    expect(Buffer.from(head).toString('hex')).toBe(before);
  });
});
