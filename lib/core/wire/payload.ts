import { packr } from './codec.js';
import { countMsgpackValues } from './msgpack-scan.js';

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
