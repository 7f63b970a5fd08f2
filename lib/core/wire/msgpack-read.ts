/**
 * Reads the few msgpack forms the wire's fast path knows (see `decodeFrame` in wire.ts): positive
 * ints up to 32 bits, ASCII fixstr, nil, bin 8/16/32. A read returns `undefined` for anything else,
 * including bytes that run past the end, and the caller hands the frame to msgpackr instead.
 */
import { Buffer } from 'node:buffer';

export class MsgpackReader {
  private bytes: Uint8Array = new Uint8Array(0);
  private at = 0;
  /**
   * The last string read and its bytes: a peer sends the same few packet names over and over, and
   * handing back the same string also spares the handler lookup hashing a new one.
   */
  private lastString = '';
  private lastBytes: Uint8Array = new Uint8Array(0);

  /** Starts over on `bytes` at `offset` (one reader serves every frame). */
  reset(bytes: Uint8Array, offset: number): this {
    this.bytes = bytes;
    this.at = offset;
    return this;
  }

  /** Where the next read starts. */
  get offset(): number {
    return this.at;
  }

  /** The next byte, unread (`undefined` past the end). */
  peek(): number | undefined {
    return this.bytes[this.at];
  }

  skip(n: number): void {
    this.at += n;
  }

  get atEnd(): boolean {
    return this.at === this.bytes.length;
  }

  uint(): number | undefined {
    const b = this.bytes;
    const at = this.at;
    const head = b[at] as number;
    if (head < 0x80) return this.advance(1, head);
    if (head === 0xcc) return this.advance(2, b[at + 1]);
    if (head === 0xcd) return this.advance(3, ((b[at + 1] as number) << 8) | (b[at + 2] as number));
    if (head !== 0xce) return undefined;
    const high = (b[at + 1] as number) * 0x1000000;
    return this.advance(
      5,
      high + (((b[at + 2] as number) << 16) | ((b[at + 3] as number) << 8) | (b[at + 4] as number)),
    );
  }

  /** A fixstr of ASCII bytes (the usual packet name); `undefined` for any other string form. */
  asciiFixstr(): string | undefined {
    const b = this.bytes;
    const head = b[this.at] as number;
    if ((head & 0xe0) !== 0xa0) return undefined;
    const start = this.at + 1;
    const end = start + (head & 0x1f);
    if (end > b.length) return undefined;
    const last = this.lastBytes;
    if (last.length !== end - start || !sameSpan(last, 0, b, start, last.length)) {
      for (let i = start; i < end; i++) if ((b[i] as number) >= 0x80) return undefined;
      this.lastString = latin1(b, start, end);
      this.lastBytes = b.subarray(start, end);
    }
    this.at = end;
    return this.lastString;
  }

  /**
   * A non-empty ASCII string as fixstr or str 8 (ids, NodeRids, generations, operation ids).
   * `slot` names the field: each keeps its last string, so a field that repeats from record to record
   * (a NodeRid, a packet) costs a comparison of its bytes, not a new string. `undefined` for any
   * other form.
   */
  asciiStr(slot: number): string | undefined {
    const b = this.bytes;
    const head = b[this.at] as number;
    let start: number;
    let length: number;
    if ((head & 0xe0) === 0xa0) {
      start = this.at + 1;
      length = head & 0x1f;
    } else if (head === 0xd9) {
      start = this.at + 2;
      length = b[this.at + 1] as number;
    } else return undefined;
    const end = start + length;
    if (length === 0 || !(end <= b.length)) return undefined;
    const last = this.slotSources[slot];
    if (
      last !== undefined &&
      this.slotLengths[slot] === length &&
      sameSpan(last, this.slotStarts[slot] as number, b, start, length)
    ) {
      this.at = end;
      return this.slotStrings[slot];
    }
    for (let i = start; i < end; i++) if ((b[i] as number) >= 0x80) return undefined;
    const s = latin1(b, start, end);
    // Where the bytes are, not a view of them (a view is an object made for every new string): a
    // received frame is never written again, so its bytes stay what they were.
    this.slotSources[slot] = b;
    this.slotStarts[slot] = start;
    this.slotLengths[slot] = length;
    this.slotStrings[slot] = s;
    this.at = end;
    return s;
  }

  private readonly slotSources: (Uint8Array | undefined)[] = [];
  private readonly slotStarts: number[] = [];
  private readonly slotLengths: number[] = [];
  private readonly slotStrings: string[] = [];

  /** `null` for nil, else an ASCII fixstr (see `asciiFixstr`). */
  nilOrAsciiFixstr(): string | null | undefined {
    if (this.bytes[this.at] !== 0xc0) return this.asciiFixstr();
    this.at++;
    return null;
  }

  /** `null` for nil, else a bin (see `bin`). */
  nilOrBin(): Uint8Array | null | undefined {
    if (this.bytes[this.at] !== 0xc0) return this.bin();
    this.at++;
    return null;
  }

  /** A view of the bytes, as msgpackr gives a bin (no copy). */
  bin(): Uint8Array | undefined {
    const b = this.bytes;
    const at = this.at;
    const head = b[at];
    let length: number;
    let start: number;
    if (head === 0xc4) {
      length = b[at + 1] as number;
      start = at + 2;
    } else if (head === 0xc5) {
      length = ((b[at + 1] as number) << 8) | (b[at + 2] as number);
      start = at + 3;
    } else if (head === 0xc6) {
      length =
        (b[at + 1] as number) * 0x1000000 +
        (((b[at + 2] as number) << 16) | ((b[at + 3] as number) << 8) | (b[at + 4] as number));
      start = at + 5;
    } else {
      return undefined;
    }
    // Past the end, a header byte reads as undefined and the sum as NaN: both fail this test.
    if (!(start + length <= b.length)) return undefined;
    this.at = start + length;
    return b.subarray(start, this.at);
  }

  private advance(size: number, value: number | undefined): number | undefined {
    if (value === undefined || Number.isNaN(value) || this.at + size > this.bytes.length) return undefined;
    this.at += size;
    return value;
  }
}

/**
 * Whether `length` bytes of `a` from `aAt` are those of `b` from `bAt`. From the end: the fields that
 * change from record to record (operation ids, numbered object ids) share a prefix and differ in their
 * last bytes.
 */
function sameSpan(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, length: number): boolean {
  for (let i = length - 1; i >= 0; i--) if (a[aAt + i] !== b[bAt + i]) return false;
  return true;
}

type Latin1Slice = (this: Uint8Array, start: number, end: number) => string;
/** Node's own bytes-to-string for one-byte text (msgpackr reads short strings with it too). */
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice?: Latin1Slice }).latin1Slice;

/** The string of ASCII bytes `start`..`end` of `b`. */
function latin1(b: Uint8Array, start: number, end: number): string {
  if (latin1Slice !== undefined) return latin1Slice.call(b, start, end);
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(b[i] as number);
  return s;
}
