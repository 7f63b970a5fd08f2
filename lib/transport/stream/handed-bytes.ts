import { Buffer } from 'node:buffer';

/**
 * What zeromq may still hold of one connection's writes, from what it accepted: an upper bound, with
 * no word back from libzmq. A write is accepted only while fewer than `hwm` messages wait in the
 * connection's pipe, and the pipe is first in, first out; besides them libzmq holds the one message
 * it is writing to the socket. So after each accepted write, at most the last `hwm + 1` messages are
 * still in zeromq. (Small messages libzmq copied into its 8 KiB write batch are out of the pipe and
 * bounded by that batch.) Nothing says when the client took them, so the bound stays at the last
 * writes' size until later writes replace them: a client that read everything still shows them.
 */
export class HandedBytes {
  private readonly sizes: number[];
  private next = 0;
  /** The bytes zeromq may hold for the connection: the sum of the last `hwm + 1` accepted sizes. */
  bytes = 0;

  constructor(hwm: number) {
    this.sizes = new Array<number>(hwm + 1).fill(0);
  }

  /** zeromq accepted a message of `size` bytes: it replaces the oldest of the last `hwm + 1`. */
  accepted(size: number): void {
    this.bytes += size - (this.sizes[this.next] as number);
    this.sizes[this.next] = size;
    this.next = (this.next + 1) % this.sizes.length;
  }
}

/**
 * Takes the first `max` bytes (or all, if fewer) off `out`, in order, as one buffer; a buffer cut in
 * two leaves its tail first in `out`. Empty buffers are dropped, never joined: an empty zeromq message
 * to a STREAM connection closes it, so `takeChunk` returns an empty buffer only when `out` held no
 * byte, and the caller then writes nothing.
 */
export function takeChunk(out: Buffer[], max: number): Buffer {
  // The usual turn's writes fit in one chunk: taken whole, as one concat, with no per-frame shift.
  let total = 0;
  for (let i = 0; i < out.length && total <= max; i++) total += (out[i] as Buffer).length;
  if (total <= max) {
    const all = out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out, total);
    out.length = 0;
    return all;
  }
  const parts: Buffer[] = [];
  let size = 0;
  while (out.length > 0 && size < max) {
    const b = out[0] as Buffer;
    const room = max - size;
    if (b.length <= room) {
      if (b.length > 0) parts.push(b);
      size += b.length;
      out.shift();
    } else {
      parts.push(b.subarray(0, room));
      out[0] = b.subarray(room);
      size = max;
    }
  }
  if (parts.length === 0) return Buffer.alloc(0);
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size);
}
