import { Buffer } from 'node:buffer';
import { type ZLinkError, invalidArgument } from '../errors.js';

/**
 * Application metadata (docs/protocol.md#metadata): small UTF-8 key/value pairs travelling beside the
 * payload.
 *
 * Wire form (our own choice): for each entry, `uvarint(keyBytes) key uvarint(valueBytes)
 * value`. "Encoded size including structure" is the length of that byte string, at most 1024.
 * Metadata is encoded once when a call is submitted and decoded once on the receiving side.
 */
export const METADATA_MAX_BYTES = 1024;

/** What a handler reads: a frozen snapshot holding the last value set for each key. */
export type ZLinkMetadata = Readonly<Record<string, string>>;

export const EMPTY_METADATA: ZLinkMetadata = Object.freeze(Object.create(null) as Record<string, string>);

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Builds up metadata for one call; the last value set for a key wins. */
export class MetadataBuilder {
  private entries: Map<string, string> | undefined;
  /** A setter got something that is not metadata; `encode` reports it (calls fail at `.async()`). */
  private invalid: ZLinkError | undefined;

  set(key: string, value: string): void {
    (this.entries ??= new Map()).set(key, value);
  }

  setAll(record: Readonly<Record<string, string>>): void {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      this.invalid ??= invalidArgument(
        'metadata',
        `expected an object of string values, got ${record === null ? 'null' : typeof record}`,
      );
      return;
    }
    for (const key of Object.keys(record)) this.set(key, record[key] as string);
  }

  get isEmpty(): boolean {
    return this.entries === undefined || this.entries.size === 0;
  }

  /** Validates and encodes; throws `InvalidArgument` naming the bad key. `undefined` when empty. */
  encode(): Uint8Array | undefined {
    if (this.invalid) throw this.invalid;
    if (this.entries === undefined || this.entries.size === 0) return undefined;
    return encodeMetadata(this.entries);
  }
}

function checkText(kind: 'key' | 'value', text: unknown, key: string): void {
  if (typeof text !== 'string') throw invalidArgument(`metadata ${kind} '${key}'`, 'must be a string');
  if (text.includes('\0')) throw invalidArgument(`metadata ${kind} '${key}'`, 'must not contain NUL');
  if (!text.isWellFormed()) throw invalidArgument(`metadata ${kind} '${key}'`, 'is not valid UTF-8');
}

function uvarintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n >>>= 7;
    len++;
  }
  return len;
}

function writeUvarint(buf: Buffer, offset: number, n: number): number {
  while (n >= 0x80) {
    buf[offset++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[offset++] = n;
  return offset;
}

/** Encoded size of the given entries, including structure. */
export function encodedMetadataSize(entries: Iterable<readonly [string, string]>): number {
  let size = 0;
  for (const [key, value] of entries) {
    const k = Buffer.byteLength(key, 'utf8');
    const v = Buffer.byteLength(value, 'utf8');
    size += uvarintLength(k) + k + uvarintLength(v) + v;
  }
  return size;
}

export function encodeMetadata(entries: ReadonlyMap<string, string>): Uint8Array {
  for (const [key, value] of entries) {
    checkText('key', key, key);
    checkText('value', value, key);
  }
  const size = encodedMetadataSize(entries);
  if (size > METADATA_MAX_BYTES) {
    throw invalidArgument('metadata', `encoded size ${size} bytes exceeds ${METADATA_MAX_BYTES}`);
  }
  const buf = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const [key, value] of entries) {
    offset = writeUvarint(buf, offset, Buffer.byteLength(key, 'utf8'));
    offset += buf.write(key, offset, 'utf8');
    offset = writeUvarint(buf, offset, Buffer.byteLength(value, 'utf8'));
    offset += buf.write(value, offset, 'utf8');
  }
  return buf;
}

export type MetadataDecodeResult =
  { readonly ok: true; readonly metadata: ZLinkMetadata } | { readonly ok: false; readonly reason: string };

/** What a message without metadata decodes to (most do): one shared, frozen result. */
const NO_METADATA: MetadataDecodeResult = Object.freeze({ ok: true, metadata: EMPTY_METADATA });

/** Never throws: bad bytes are a typed failure the receiver counts and answers. */
export function decodeMetadata(bytes: Uint8Array | undefined | null): MetadataDecodeResult {
  if (bytes === undefined || bytes === null || bytes.length === 0) return NO_METADATA;
  if (bytes.length > METADATA_MAX_BYTES) {
    return { ok: false, reason: `metadata of ${bytes.length} bytes exceeds ${METADATA_MAX_BYTES}` };
  }
  const out = Object.create(null) as Record<string, string>;
  let offset = 0;
  const readText = (): string | undefined => {
    let len = 0;
    let shift = 0;
    for (;;) {
      if (offset >= bytes.length || shift > 21) return undefined;
      const b = bytes[offset++] as number;
      len |= (b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7;
    }
    if (offset + len > bytes.length) return undefined;
    const slice = bytes.subarray(offset, offset + len);
    offset += len;
    if (slice.includes(0)) return undefined;
    try {
      return fatalUtf8.decode(slice);
    } catch {
      return undefined;
    }
  };
  while (offset < bytes.length) {
    const key = readText();
    if (key === undefined) return { ok: false, reason: 'malformed metadata key' };
    const value = readText();
    if (value === undefined) return { ok: false, reason: `malformed metadata value for '${key}'` };
    out[key] = value;
  }
  return { ok: true, metadata: Object.freeze(out) };
}

/** Convenience for callers outside the hot path (tests, tools). */
export function metadataFromRecord(record: Readonly<Record<string, string>>): Uint8Array | undefined {
  const builder = new MetadataBuilder();
  builder.setAll(record);
  return builder.encode();
}
