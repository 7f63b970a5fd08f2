import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { curveKeyPair } from 'zeromq';
import {
  curveKeyBytes,
  curvePairSecret,
  curveProof,
  curveProofHolds,
  curvePublicKeyOf,
  z85Decode,
  z85Encode,
  zlinkKeyPair,
} from '../../../lib/core/index.js';

/**
 * CURVE keys in Z85 and the runtime's own X25519: Z85 round-trips, a pair made here is one ZeroMQ
 * would make (the public key is the one its secret gives), the pair secret is the same from both
 * ends, and a proof holds only with the keys it was made with.
 */
describe('CURVE keys', () => {
  it('Z85 reads back what it wrote (property), and refuses what is not Z85', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 64 }).filter((b) => b.length % 4 === 0),
        (bytes) => {
          expect(z85Decode(z85Encode(bytes))).toEqual(Buffer.from(bytes));
        },
      ),
    );
    // The ZeroMQ RFC 32 test vector.
    expect(z85Encode(Buffer.from([0x86, 0x4f, 0xd2, 0x6f, 0xb5, 0x59, 0xf7, 0x5b]))).toBe('HelloWorld');
    expect(z85Decode('Hello')).toEqual(Buffer.from([0x86, 0x4f, 0xd2, 0x6f]));
    expect(z85Decode('Hell')).toBeUndefined();
    expect(z85Decode('Hell~')).toBeUndefined();
    expect(z85Decode('#####')).toBeUndefined(); // over 2^32
    expect(curveKeyBytes('short')).toBeUndefined();
    expect(curveKeyBytes(42)).toBeUndefined();
  });

  it("derives ZeroMQ's own public key from its secret key, and makes pairs that hold together", () => {
    for (let i = 0; i < 5; i++) {
      const zmq = curveKeyPair();
      expect(curvePublicKeyOf(zmq.secretKey)).toBe(zmq.publicKey);
      const ours = zlinkKeyPair();
      expect(ours.publicKey).toHaveLength(40);
      expect(curvePublicKeyOf(ours.secretKey)).toBe(ours.publicKey);
    }
  });

  it('a pair secret is the same from both ends; a proof holds only for the pair and the words it was made over', () => {
    const a = zlinkKeyPair();
    const b = zlinkKeyPair();
    const c = zlinkKeyPair();
    const ab = curvePairSecret(a.secretKey, b.publicKey);
    expect(curvePairSecret(b.secretKey, a.publicKey)).toEqual(ab);
    const proof = curveProof(ab, ['hello', 'mesh', 'node-a']);
    expect(
      curveProofHolds(curvePairSecret(b.secretKey, a.publicKey), ['hello', 'mesh', 'node-a'], proof),
    ).toBe(true);
    // Another holder's key (a stolen NodeRid), other words, a cut proof: none holds.
    expect(
      curveProofHolds(curvePairSecret(b.secretKey, c.publicKey), ['hello', 'mesh', 'node-a'], proof),
    ).toBe(false);
    expect(curveProofHolds(ab, ['hello', 'mesh', 'node-c'], proof)).toBe(false);
    expect(curveProofHolds(ab, ['hello', 'mesh', 'node-a'], proof.subarray(0, 16))).toBe(false);
  });
});
