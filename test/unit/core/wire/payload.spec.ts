import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { MAX_PAYLOAD_VALUES, decodePayload, encodePayload, passPayload } from '../../../../lib/core/index.js';

/**
 * `passPayload` hands a reply's payload on without reading it (a session relay,
 * docs/sessions.md#binding-and-relaying): whatever it gives reads back as `decodePayload` reads the
 * payload, and a payload `decodePayload` refuses is refused with the same reason.
 */
describe('a payload handed on as bytes', () => {
  it('plain msgpack values go as the very bytes they came in', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const bytes = encodePayload(value);
        const passed = passPayload(bytes);
        expect(passed).toBe(bytes);
        expect(decodePayload(passed as Uint8Array)).toEqual(decodePayload(bytes));
      }),
    );
  });

  it('an ext (a Date) or 0xc1 is decoded and encoded again, as a reader of the value would', () => {
    for (const bytes of [encodePayload({ at: new Date(1_700_000_000_000), n: 1 }), Buffer.from([0xc1])]) {
      const passed = passPayload(bytes);
      expect(passed).not.toBe(bytes);
      expect(passed).toEqual(encodePayload((decodePayload(bytes) as { value: unknown }).value));
    }
  });

  it('refuses what decodePayload refuses, in its words: cut short, bytes past the value, too many values', () => {
    const many = Buffer.alloc(5 + MAX_PAYLOAD_VALUES + 8, 0x90);
    many[0] = 0xdd; // array 32 of that many empty arrays
    many.writeUInt32BE(MAX_PAYLOAD_VALUES + 8, 1);
    for (const bad of [Buffer.from([0x92, 0x01]), Buffer.from([0x01, 0x02]), Buffer.alloc(0), many]) {
      const decoded = decodePayload(bad);
      expect(decoded.ok).toBe(false);
      expect(passPayload(bad)).toBe((decoded as { reason: string }).reason);
    }
  });
});
