/**
 * The few msgpack forms the wire writes by hand (see `encodeRequest` in wire.ts), each with the
 * smallest header that fits, as msgpackr chooses it. Every writer returns the offset after what it
 * wrote; the size functions give the bytes it will take.
 */
import { Buffer } from 'node:buffer';

export function uintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
}

export function uint(out: Buffer, at: number, n: number): number {
  if (n < 0x80) {
    out[at] = n;
    return at + 1;
  }
  if (n < 0x100) {
    out[at] = 0xcc;
    out[at + 1] = n;
    return at + 2;
  }
  if (n < 0x10000) {
    out[at] = 0xcd;
    out.writeUInt16BE(n, at + 1);
    return at + 3;
  }
  out[at] = 0xce;
  out.writeUInt32BE(n, at + 1);
  return at + 5;
}

export function binSize(bytes: Uint8Array): number {
  const n = bytes.length;
  return (n < 0x100 ? 2 : n < 0x10000 ? 3 : 5) + n;
}

export function bin(out: Buffer, at: number, bytes: Uint8Array): number {
  const n = bytes.length;
  if (n < 0x100) {
    out[at] = 0xc4;
    out[at + 1] = n;
    at += 2;
  } else if (n < 0x10000) {
    out[at] = 0xc5;
    out.writeUInt16BE(n, at + 1);
    at += 3;
  } else {
    out[at] = 0xc6;
    out.writeUInt32BE(n, at + 1);
    at += 5;
  }
  out.set(bytes, at);
  return at + n;
}

/** Metadata travels as nil when there is none. */
export function optionalBinSize(bytes: Uint8Array | undefined): number {
  return bytes === undefined ? 1 : binSize(bytes);
}

export function optionalBin(out: Buffer, at: number, bytes: Uint8Array | undefined): number {
  if (bytes !== undefined) return bin(out, at, bytes);
  out[at] = 0xc0;
  return at + 1;
}

/** A fixarray of `length` whose first two items are positive fixints. */
export function head(out: Buffer, length: number, first: number, second: number): number {
  out[0] = 0x90 | length;
  out[1] = first;
  out[2] = second;
  return 3;
}

/** The bytes a string takes, header included, for its UTF-8 length `n` (msgpackr's smallest header). */
export function strSize(n: number): number {
  return (n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5) + n;
}

/** Writes `s`, whose UTF-8 length is `n`, with the smallest header (as msgpackr does). */
export function str(out: Buffer, at: number, s: string, n: number): number {
  at = strHead(out, at, n);
  // ASCII (as long in bytes as in chars), the usual id: copied by hand, cheaper than an encoder call.
  if (n === s.length) {
    for (let i = 0; i < n; i++) out[at + i] = s.charCodeAt(i);
    return at + n;
  }
  return at + out.write(s, at, n, 'utf8');
}

/** The header of a string of `n` UTF-8 bytes, the smallest that fits (as msgpackr writes it). */
export function strHead(out: Buffer, at: number, n: number): number {
  if (n < 0x20) out[at++] = 0xa0 | n;
  else if (n < 0x100) {
    out[at] = 0xd9;
    out[at + 1] = n;
    at += 2;
  } else if (n < 0x10000) {
    out[at] = 0xda;
    out.writeUInt16BE(n, at + 1);
    at += 3;
  } else {
    out[at] = 0xdb;
    out.writeUInt32BE(n, at + 1);
    at += 5;
  }
  return at;
}

/** The UTF-8 length of `s`: its length when it is ASCII (checked by hand), else the encoder's count. */
export function utf8Length(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s);
  return s.length;
}

/** Copies `bytes` (already msgpack: a cached name, a precomputed address) in at `at`. */
export function put(out: Buffer, at: number, bytes: Uint8Array): number {
  out.set(bytes, at);
  return at + bytes.length;
}
