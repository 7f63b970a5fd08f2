import { Buffer } from 'node:buffer';
import {
  type KeyObject,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  timingSafeEqual,
} from 'node:crypto';

/**
 * CURVE keys as ZeroMQ takes them (Z85 text, 40 characters for 32 bytes) and the little X25519 the
 * runtime does itself (docs/decisions.md "CURVE"): making a pair, checking that a public key belongs
 * to a secret one, and the proof a MeshNode's hello carries that it holds the key its NodeRid is
 * known by. Node's own crypto: no native module beyond zeromq's.
 */

/** A CURVE key pair in Z85: what `security.curve` takes. */
export interface ZLinkKeyPair {
  readonly publicKey: string;
  readonly secretKey: string;
}

const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const Z85_VALUE = new Map([...Z85].map((c, i) => [c, i]));

/** Z85 text of `bytes` (a multiple of 4 long). */
export function z85Encode(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    let v = ((bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!) >>> 0;
    let chunk = '';
    for (let j = 0; j < 5; j++) {
      chunk = Z85[v % 85]! + chunk;
      v = Math.floor(v / 85);
    }
    out += chunk;
  }
  return out;
}

/**
 * The bytes of Z85 `text`, or `undefined` when it is not Z85 (a length not a multiple of 5, a foreign
 * character, an overflow).
 */
export function z85Decode(text: string): Buffer | undefined {
  if (text.length % 5 !== 0) return undefined;
  const out = Buffer.alloc((text.length / 5) * 4);
  for (let i = 0; i < text.length; i += 5) {
    let v = 0;
    for (let j = 0; j < 5; j++) {
      const d = Z85_VALUE.get(text[i + j]!);
      if (d === undefined) return undefined;
      v = v * 85 + d;
    }
    if (v > 0xffffffff) return undefined;
    out.writeUInt32BE(v, (i / 5) * 4);
  }
  return out;
}

/** A CURVE key's 32 bytes from Z85, or `undefined` when `text` is not one. */
export function curveKeyBytes(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || text.length !== 40) return undefined;
  return z85Decode(text);
}

// DER headers of a raw X25519 key: PKCS#8 for a secret one, SPKI for a public one.
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex');

function secretKeyObject(secret: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519, secret]), format: 'der', type: 'pkcs8' });
}

function publicKeyObject(key: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_X25519, key]), format: 'der', type: 'spki' });
}

/** The Z85 public key that belongs to Z85 secret key `secretKey`. */
export function curvePublicKeyOf(secretKey: string): string {
  const secret = curveKeyBytes(secretKey);
  if (secret === undefined) throw new TypeError('not a Z85 CURVE key');
  const spki = createPublicKey(secretKeyObject(secret)).export({ format: 'der', type: 'spki' });
  return z85Encode(spki.subarray(spki.length - 32));
}

/** A new CURVE key pair (X25519), in Z85, as `security.curve` takes it. */
export function zlinkKeyPair(): ZLinkKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  return {
    publicKey: z85Encode(spki.subarray(spki.length - 32)),
    secretKey: z85Encode(pkcs8.subarray(pkcs8.length - 32)),
  };
}

/**
 * What only the holders of `secretKey` and of the secret key behind `peerPublicKey` can compute:
 * the X25519 secret of the pair (the same from either side).
 */
export function curvePairSecret(secretKey: string, peerPublicKey: string): Buffer {
  const secret = curveKeyBytes(secretKey);
  const peer = curveKeyBytes(peerPublicKey);
  if (secret === undefined || peer === undefined) throw new TypeError('not a Z85 CURVE key');
  return diffieHellman({ privateKey: secretKeyObject(secret), publicKey: publicKeyObject(peer) });
}

/** The proof over `parts` made with a pair secret (HMAC-SHA-256). */
export function curveProof(pairSecret: Buffer, parts: readonly string[]): Buffer {
  return createHmac('sha256', pairSecret).update(parts.join('\u0000')).digest();
}

/** Whether `proof` is the one `pairSecret` makes over `parts` (in constant time). */
export function curveProofHolds(pairSecret: Buffer, parts: readonly string[], proof: Uint8Array): boolean {
  const expected = curveProof(pairSecret, parts);
  return proof.length === expected.length && timingSafeEqual(expected, proof);
}
