import { Buffer } from 'node:buffer';
import { msgpackValueEnd } from '../../core/wire/index.js';
import { type ObjectAddress, REQUEST_LENGTH, SEND_LENGTH } from './object-wire.js';

/**
 * Values before the address: version and kind, and a request's reply route (correlation, rid, generation).
 */
const BEFORE_ADDRESS = { send: 2, request: 5 } as const;
/** The address (kind, id, fences), then operation id, packet, metadata, payload and trace before `hops`. */
const ADDRESS_VALUES = 3;
const CALL_VALUES = 5;

/**
 * A send or request record as Message Follow relays it (`wire`: the bytes it arrived in, read already):
 * the same bytes with the address replaced by the new owner's (`to.bytes`, written once per move) and
 * `hops` written in its slot, so the reply route, operation id, payload, trace, session stamp and any
 * later field go on exactly as they came, never decoded and encoded again. `undefined` (the caller
 * encodes the record instead) unless the bytes are the array this version writes, every item plain
 * msgpack (no ext) to the last byte. `hops` is 1..127.
 */
export function relayedCallBytes(
  wire: Uint8Array,
  messageKind: 'send' | 'request',
  to: ObjectAddress,
  hops: number,
): Uint8Array | undefined {
  const address = to.bytes;
  const head = wire[0] as number;
  // A fixarray, or an array 16 once a later version's fields make it longer than 15 items.
  const headLength = head === 0xdc ? 3 : 1;
  const items = head === 0xdc ? ((wire[1] as number) << 8) | (wire[2] as number) : head & 0x0f;
  const length = messageKind === 'send' ? SEND_LENGTH : REQUEST_LENGTH;
  if (address === undefined || ((head & 0xf0) !== 0x90 && head !== 0xdc) || items < length) return undefined;
  // Every item walked plainly, to the last byte: an ext could make msgpackr read the spliced bytes
  // otherwise than the record this node checked (a peer's ext hiding fields inside the fences), so a
  // record holding one is encoded again from what was read instead.
  let at = headLength;
  const skip = (values: number): number => {
    for (let i = 0; i < values && at > 0; i++) at = msgpackValueEnd(wire, at, true);
    return at;
  };
  const addressStart = skip(BEFORE_ADDRESS[messageKind]);
  const addressEnd = skip(ADDRESS_VALUES);
  const hopsStart = skip(CALL_VALUES);
  // `hops` is the item after the trace: replaced when the record has one, else appended as the last.
  const hopsEnd = skip(items > length ? 1 : 0);
  if (skip(items - length - (items > length ? 1 : 0)) !== wire.length) return undefined;
  const count = Math.max(items, length + 1);
  const newHead = count > 15 ? 3 : 1;
  const out = Buffer.allocUnsafe(
    newHead +
      (addressStart - headLength) +
      address.length +
      (hopsStart - addressEnd) +
      1 +
      wire.length -
      hopsEnd,
  );
  if (newHead === 1) out[0] = 0x90 | count;
  else {
    out[0] = 0xdc;
    out.writeUInt16BE(count, 1);
  }
  out.set(wire.subarray(headLength, addressStart), newHead);
  let o = newHead + addressStart - headLength;
  out.set(address, o);
  o += address.length;
  out.set(wire.subarray(addressEnd, hopsStart), o);
  o += hopsStart - addressEnd;
  out[o++] = hops;
  out.set(wire.subarray(hopsEnd), o);
  return out;
}
