import { packr } from './codec.js';
import { countMsgpackValues, msgpackValueEnd } from './msgpack-scan.js';

/** A call's payload, the one msgpack value a record carries as `bin` (see wire.ts). */

export function encodePayload(value: unknown): Uint8Array {
  return packr.pack(value);
}

export type PayloadDecodeResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/**
 * The most msgpack values one payload may decode to. A payload is one `bin` in its frame, so the frame
 * bounds do not reach inside it: 64 MB of `0x90` would again be 64 million arrays. Four million values
 * is far past any sensible message (a 4M-element array) and bounds the worst case to a few hundred MB.
 */
export const MAX_PAYLOAD_VALUES = 1 << 22;

export function decodePayload(bytes: Uint8Array): PayloadDecodeResult {
  if (bytes.length > MAX_PAYLOAD_VALUES && countMsgpackValues(bytes, MAX_PAYLOAD_VALUES) > MAX_PAYLOAD_VALUES)
    return { ok: false, reason: `payload: more than ${MAX_PAYLOAD_VALUES} msgpack values` };
  try {
    return { ok: true, value: packr.unpack(bytes) };
  } catch (e) {
    return { ok: false, reason: `payload: ${(e as Error).message}` };
  }
}

/**
 * A payload to hand on as msgpack bytes without reading it (a session relay's reply, written into the
 * client's Reply frame as it came: docs/sessions.md#binding-and-relaying): `bytes` themselves when a
 * plain walk of their headers finds exactly one value with no ext (what `decodePayload` reads, with
 * nothing past it); else, as a reader of the value would, decoded and encoded again — or, when that
 * fails, `decodePayload`'s reason, a string. Never throws. The walk does not bound nesting: a value
 * nested deeper than this process's decoder reaches goes on as it is (only a peer's own encoder could
 * have made it, and its reader refuses it).
 */
export function passPayload(bytes: Uint8Array): Uint8Array | string {
  if (bytes.length <= MAX_PAYLOAD_VALUES && msgpackValueEnd(bytes, 0, true) === bytes.length) return bytes;
  const decoded = decodePayload(bytes);
  if (!decoded.ok) return decoded.reason;
  try {
    return encodePayload(decoded.value);
  } catch (e) {
    return `payload: ${(e as Error).message}`;
  }
}
