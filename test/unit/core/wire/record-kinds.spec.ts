import { describe, expect, it } from '@jest/globals';
import {
  RESERVED_KINDS,
  RecordKind,
  WIRE_VERSION,
  decodeFrame,
  encodePayload,
  encodeReply,
  joinRecords,
} from '../../../../lib/core/index.js';

/** The one table of record kinds: every number taken once, the object layer's reserved and unread. */

describe('record kinds', () => {
  it('no two kinds share a number, and every one fits the one-byte header the hand-written records use', () => {
    const numbers = Object.values(RecordKind);
    expect(new Set(numbers).size).toBe(numbers.length);
    for (const n of numbers) expect(Number.isInteger(n) && n > 0 && n < 0x80).toBe(true);
  });

  it("takes the spec's command numbers for the session relocation and message follow records", () => {
    expect(RecordKind).toMatchObject({
      SessionRelocationSeal: 42,
      SessionRelocationSealReply: 43,
      SessionRelocationRoute: 44,
      MessageFollow: 50,
    });
  });

  it.each([...RESERVED_KINDS])(
    'a record of reserved kind %i (%s) is malformed, named, and carries no correlation',
    (kind, name) => {
      const record = encodePayload([WIRE_VERSION, kind, 5, 'match', 'who', null, encodePayload(1)]);
      const decoded = decodeFrame(joinRecords([record, encodeReply(8, encodePayload(2))]));
      expect(decoded.malformed).toEqual([
        { reason: `record kind ${kind} (${name}) is reserved; this version does not read it` },
      ]);
      expect(decoded.records).toMatchObject([{ kind: RecordKind.Reply, correlation: 8 }]);
    },
  );

  it('an unknown kind is still named as unknown', () => {
    expect(decodeFrame(encodePayload([WIRE_VERSION, 99])).malformed).toEqual([
      { reason: 'unknown record kind 99' },
    ]);
  });
});
