import { Buffer } from 'node:buffer';

/*
 * A batch's rows as the batch scripts read them (`batchOf` in state-scripts.ts): one msgpack array of
 * arrays, every value a msgpack `str` holding the value's bytes as they are. `str`, not `bin`: Redis's
 * built-in `cmsgpack` reads no `bin` (it answers "Bad data format"), and it never checks that a `str`
 * is UTF-8, so saved bytes go through untouched. Written by hand in two passes (sizes, then bytes into
 * one buffer): one allocation for the whole batch.
 */

type Value = string | Uint8Array;

const arrayHeaderSize = (n: number): number => (n < 16 ? 1 : n < 0x10000 ? 3 : 5);
const strHeaderSize = (n: number): number => (n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);
const byteLength = (v: Value): number => (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.length);

/** `rows` packed for a batch script: an array of arrays of `str`. */
export function packScriptRows(rows: readonly (readonly Value[])[]): Buffer {
  let size = arrayHeaderSize(rows.length);
  for (const row of rows) {
    size += arrayHeaderSize(row.length);
    for (const v of row) {
      const n = byteLength(v);
      size += strHeaderSize(n) + n;
    }
  }
  const out = Buffer.allocUnsafe(size);
  let at = writeArrayHeader(out, 0, rows.length);
  for (const row of rows) {
    at = writeArrayHeader(out, at, row.length);
    for (const v of row) {
      const n = byteLength(v);
      at = writeStrHeader(out, at, n);
      at += typeof v === 'string' ? out.write(v, at, 'utf8') : (out.set(v, at), n);
    }
  }
  return out;
}

function writeArrayHeader(out: Buffer, at: number, n: number): number {
  if (n < 16) return out.writeUInt8(0x90 | n, at);
  if (n < 0x10000) return out.writeUInt16BE(n, out.writeUInt8(0xdc, at));
  return out.writeUInt32BE(n, out.writeUInt8(0xdd, at));
}

function writeStrHeader(out: Buffer, at: number, n: number): number {
  if (n < 32) return out.writeUInt8(0xa0 | n, at);
  if (n < 0x100) return out.writeUInt8(n, out.writeUInt8(0xd9, at));
  if (n < 0x10000) return out.writeUInt16BE(n, out.writeUInt8(0xda, at));
  return out.writeUInt32BE(n, out.writeUInt8(0xdb, at));
}
