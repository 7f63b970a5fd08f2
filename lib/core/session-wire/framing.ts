/**
 * The byte stream of an end-user session (docs/sessions-wire.md, "Framing"): every frame is a 4-byte
 * unsigned big-endian length N followed by N bytes of body, 1 <= N <= the listener's `maxFrameBytes`.
 * Nothing else travels on the connection. One splitter per connection turns the chunks TCP delivers
 * (any size, any boundary) back into frame bodies. Plain `Uint8Array`s, no Buffer: the listener and
 * the session clients (a browser's too) share these rules.
 */

/** Bytes of the length prefix. */
export const FRAME_HEADER_BYTES = 4;

/** Why a splitter stopped: the stream cannot be read past this point and the connection must close. */
export type FramingFault = 'emptyFrame' | 'frameTooLarge';

/**
 * What is wrong with a frame body of `length` bytes, if anything: `1 <= length <= maxFrameBytes`
 * (docs/sessions-wire.md#framing), whether the length came in a prefix or as a whole message.
 */
export function bodyLengthFault(length: number, maxFrameBytes: number): FramingFault | undefined {
  if (length === 0) return 'emptyFrame';
  return length > maxFrameBytes ? 'frameTooLarge' : undefined;
}

/**
 * Splits one connection's byte stream into frame bodies. A body that lies inside one chunk is handed
 * on as a view of that chunk (no copy); one that spans chunks is gathered and joined once, when its
 * last byte arrives — never allocated up front from the announced length, so a peer that announces
 * the largest frame and then sends slowly holds only what it actually sent.
 */
export class FrameSplitter {
  private readonly header = new Uint8Array(FRAME_HEADER_BYTES);
  /** Header bytes gathered so far, while a header spans chunks. */
  private headerHave = 0;
  /** The body length being gathered; `-1` while reading a header. */
  private want = -1;
  private parts: Uint8Array[] = [];
  private have = 0;
  private fault: FramingFault | undefined;

  constructor(private readonly maxFrameBytes: number) {}

  /** Bytes held for a frame not yet complete (what this connection costs in buffers right now). */
  get buffered(): number {
    return this.have + this.headerHave;
  }

  /**
   * Feeds one chunk; calls `onFrame` with each complete body, in order, and stops early when it
   * returns `false` (the connection is closing). Returns the fault that ends the stream, if any: the
   * frames before it were delivered, nothing after it ever is.
   */
  push(chunk: Uint8Array, onFrame: (body: Uint8Array) => boolean): FramingFault | undefined {
    if (this.fault !== undefined) return this.fault;
    let at = 0;
    while (at < chunk.length) {
      if (this.want < 0) {
        // The common case: a whole header in this chunk.
        if (this.headerHave === 0 && chunk.length - at >= FRAME_HEADER_BYTES) {
          this.want = readLength(chunk, at);
          at += FRAME_HEADER_BYTES;
        } else {
          const take = Math.min(FRAME_HEADER_BYTES - this.headerHave, chunk.length - at);
          this.header.set(chunk.subarray(at, at + take), this.headerHave);
          this.headerHave += take;
          at += take;
          if (this.headerHave < FRAME_HEADER_BYTES) return undefined;
          this.headerHave = 0;
          this.want = readLength(this.header, 0);
        }
        const fault = bodyLengthFault(this.want, this.maxFrameBytes);
        if (fault !== undefined) return (this.fault = fault);
      }
      const missing = this.want - this.have;
      const available = chunk.length - at;
      if (this.have === 0 && available >= missing) {
        const body = chunk.subarray(at, at + missing);
        at += missing;
        this.want = -1;
        if (!onFrame(body)) return undefined;
        continue;
      }
      const take = Math.min(missing, available);
      this.parts.push(chunk.subarray(at, at + take));
      this.have += take;
      at += take;
      if (this.have < this.want) return undefined;
      const body = join(this.parts, this.have);
      this.parts = [];
      this.have = 0;
      this.want = -1;
      if (!onFrame(body)) return undefined;
    }
    return undefined;
  }
}

function readLength(bytes: Uint8Array, at: number): number {
  return (
    (bytes[at] as number) * 0x1000000 +
    (((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number))
  );
}

/** The parts of one body, copied once into a body of `length` bytes. */
function join(parts: readonly Uint8Array[], length: number): Uint8Array {
  const body = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.length;
  }
  return body;
}

/** Writes the length prefix of a body of `length` bytes at `at` of `out`; returns where the body goes. */
export function writeFrameHeader(out: Uint8Array, at: number, length: number): number {
  // Big-endian; a Uint8Array keeps the low 8 bits of each.
  out[at] = length >>> 24;
  out[at + 1] = length >>> 16;
  out[at + 2] = length >>> 8;
  out[at + 3] = length;
  return at + FRAME_HEADER_BYTES;
}

/** One frame: the prefix and a copy of `body`. */
export function frame(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_BYTES + body.length);
  out.set(body, writeFrameHeader(out, 0, body.length));
  return out;
}
