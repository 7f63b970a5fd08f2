/**
 * Counts the msgpack values in `bytes` — every value, nested ones included — without decoding or
 * allocating anything, and stops as soon as the count passes `limit`. A decoder turns each value
 * into a JS value, so this bounds what one frame can make it allocate: a frame of N bytes may hold
 * N values (one byte each), and 64 MB of `0x90` decodes to 64 million empty arrays.
 *
 * A linear walk over headers visits every value once (a container's items simply follow it); str,
 * bin and ext bodies are skipped by their length. Bytes that run past the end stop the count.
 */
export function countMsgpackValues(bytes: Uint8Array, limit: number): number {
  let at = 0;
  let count = 0;
  while (at < bytes.length && count <= limit) {
    const b = bytes[at] as number;
    count++;
    if (b < 0xa0 || b >= 0xe0)
      at += 1; // fixint, fixmap, fixarray, negative fixint
    else if (b < 0xc0)
      at += 1 + (b & 0x1f); // fixstr
    else {
      const fixed = FIXED_SIZE[b - 0xc0] as number;
      at += fixed > 0 ? fixed : sizeWithLength(bytes, at, b);
    }
  }
  return count;
}

/**
 * Bytes a header from 0xc0 to 0xdf takes with its body, when that does not depend on a length field
 * (0 where it does: bin, str, ext). Arrays and maps count their header only.
 */
// prettier-ignore
const FIXED_SIZE = [
  1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 5, 9, 2, 3, 5, 9, // nil, (never used), false, true, bin*, ext*, float, uint
  2, 3, 5, 9, 3, 4, 6, 10, 18, 0, 0, 0, 3, 5, 3, 5, // int, fixext, str*, array 16/32, map 16/32
];

/** bin 8/16/32, ext 8/16/32 (one type byte more), str 8/16/32: header, length field and body. */
function sizeWithLength(bytes: Uint8Array, at: number, b: number): number {
  const field = b === 0xc4 || b === 0xc7 || b === 0xd9 ? 1 : b === 0xc5 || b === 0xc8 || b === 0xda ? 2 : 4;
  let length = 0;
  // Past the end the length is infinite, and so the walk stops.
  for (let i = 1; i <= field; i++) length = length * 256 + (bytes[at + i] ?? Infinity);
  const extType = b >= 0xc7 && b <= 0xc9 ? 1 : 0;
  return 1 + field + extType + length;
}

/**
 * Where the msgpack value that starts at `at` ends (nested values included), without decoding or
 * allocating anything; `-1` when it runs past the end of `bytes`. A linear walk over headers, as
 * `countMsgpackValues` does, keeping how many items the open containers still hold.
 *
 * `plain`: `-1` also at an ext value (or the never-used 0xc1). msgpackr gives some exts a meaning that
 * reaches past their own bytes (a record definition, a string bundle read from the end of the buffer),
 * so where an ext can stand, where this walk says a value ends need not be where msgpackr's reading of
 * it does. A caller that cuts bytes at these boundaries and has them read again walks plainly.
 */
export function msgpackValueEnd(bytes: Uint8Array, at: number, plain = false): number {
  let pending = 1;
  while (pending > 0) {
    if (at >= bytes.length) return -1;
    const b = bytes[at] as number;
    if (plain && isExtOrUnused(b)) return -1;
    pending--;
    if (b < 0x80 || b >= 0xe0) at += 1;
    else if (b < 0x90) {
      pending += 2 * (b & 0x0f);
      at += 1;
    } else if (b < 0xa0) {
      pending += b & 0x0f;
      at += 1;
    } else if (b < 0xc0) at += 1 + (b & 0x1f);
    else if (b >= 0xdc) {
      // array 16/32, map 16/32: the count follows the header
      const wide = b === 0xdd || b === 0xdf;
      if (at + (wide ? 4 : 2) >= bytes.length) return -1;
      let n = 0;
      for (let i = 1; i <= (wide ? 4 : 2); i++) n = n * 256 + (bytes[at + i] as number);
      pending += b >= 0xde ? 2 * n : n;
      at += wide ? 5 : 3;
    } else {
      const fixed = FIXED_SIZE[b - 0xc0] as number;
      at += fixed > 0 ? fixed : sizeWithLength(bytes, at, b);
    }
  }
  return at <= bytes.length ? at : -1;
}

/** ext 8/16/32 (0xc7–0xc9), fixext 1–16 (0xd4–0xd8), and 0xc1, which msgpack never uses. */
function isExtOrUnused(b: number): boolean {
  return b === 0xc1 || (b >= 0xc7 && b <= 0xc9) || (b >= 0xd4 && b <= 0xd8);
}
