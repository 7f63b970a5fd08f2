/**
 * The most an error's `details` take on any wire (msgpack bytes). Larger details are cut to fit: of
 * Nest's HTTP error body (`{ statusCode, message: [...], error }`, a `ValidationPipe` failure) the
 * leading messages that fit are kept and `truncated` counts the ones left out; anything else becomes
 * `{ truncated: true, bytes }` (about their size; absent past 16 KiB).
 */
export const MAX_ERROR_DETAILS_BYTES = 4096;

/** Past this many counted bytes the walk stops: the size is only said to be "large". */
const COUNT_LIMIT = 4 * MAX_ERROR_DETAILS_BYTES;
/** Deeper than this, details are taken as too large (msgpackr itself would recurse without end). */
const MAX_DEPTH = 32;

/** Details as they go on the wire, or why they cannot; `note` set means the details are left out. */
export interface BoundedDetails {
  readonly details?: unknown;
  /** Why the details could not be encoded (a cycle, a symbol, a BigInt past 64 bits, a throwing `toJSON`). */
  readonly note?: string;
}

/**
 * The UTF-8 length of `s`, as Buffer.byteLength gives it (a lone surrogate counts as U+FFFD, 3 bytes),
 * without Buffer: errors reach the browser session client too.
 */
function utf8Bytes(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c < 0xdc00 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}

/** Thrown inside the walk only: the details can never be encoded. */
class Unencodable {
  constructor(readonly reason: string) {}
}

/**
 * Plain data (see `plainDetails`) and at least its msgpack size; `bytes` is `Infinity` past `COUNT_LIMIT`.
 */
interface Plain {
  value: unknown;
  bytes: number;
}

/**
 * `details` bounded to `MAX_ERROR_DETAILS_BYTES`, as plain data: what is measured is what is sent, so
 * no value (a `Map`, a class instance, a getter) can count small and encode large. Never throws.
 */
export function boundedDetails(details: unknown): BoundedDetails {
  if (details === undefined) return {};
  try {
    const plain = plainDetails(details);
    if (plain.bytes <= MAX_ERROR_DETAILS_BYTES) return { details: plain.value };
    const cut = cutHttpBody(details);
    if (cut !== undefined) return { details: cut };
    return {
      details: Number.isFinite(plain.bytes) ? { truncated: true, bytes: plain.bytes } : { truncated: true },
    };
  } catch (e) {
    // A getter, a Proxy or a toJSON of the details' own threw, or the details hold what msgpack has no form
    // for.
    return { note: e instanceof Unencodable ? e.reason : `reading them threw: ${describe(e)}` };
  }
}

/**
 * Of Nest's HTTP error body (`message` a list), the leading messages that fit, `truncated` counting the
 * ones left out; `undefined` when `body` is not such a body or its other fields alone do not fit.
 */
function cutHttpBody(body: unknown): unknown {
  if (!isPlainObject(body) || !Array.isArray(body.message)) return undefined;
  const all = body.message as unknown[];
  const head = plainDetails({ ...body, message: [], truncated: all.length });
  // Room for the body without its messages, then each message's own bytes (and slack for the count).
  let room = MAX_ERROR_DETAILS_BYTES - head.bytes - 8;
  const kept: unknown[] = [];
  for (const m of all) {
    const one = plainDetails(m);
    room -= one.bytes;
    if (room < 0) break;
    kept.push(one.value);
  }
  const cut = plainDetails({ ...(head.value as object), message: kept, truncated: all.length - kept.length });
  return cut.bytes <= MAX_ERROR_DETAILS_BYTES ? cut.value : undefined;
}

/** What was thrown, in at most 200 characters (it ends up in an error message). */
const describe = (e: unknown): string => (e instanceof Error ? e.message.slice(0, 200) : typeof e);

/**
 * `value` as plain data, as msgpackr would write it, with at least its msgpack size (each head at its
 * largest): strings, numbers, booleans, null, undefined, binary and `Date` as they are; an array's and a
 * `Set`'s items as an array; a `Map`'s entries and a plain object's own enumerable properties as a
 * map; any other object as its `toJSON()` result, or else its own enumerable properties (a class
 * instance, an `Error`). Stops copying past `COUNT_LIMIT` (bytes `Infinity`). Throws `Unencodable`.
 */
function plainDetails(value: unknown): Plain {
  const walk = new Walk();
  const copy = walk.plain(value, 0);
  return { value: copy, bytes: walk.bytes };
}

class Walk {
  bytes = 0;
  /** The objects being copied, outermost first: meeting one again is a cycle. */
  private readonly open = new Set<object>();

  private add(n: number): boolean {
    this.bytes += n;
    if (this.bytes <= COUNT_LIMIT) return true;
    this.bytes = Number.POSITIVE_INFINITY;
    return false;
  }

  plain(value: unknown, depth: number): unknown {
    switch (typeof value) {
      case 'string':
        this.add(5 + utf8Bytes(value));
        return value;
      case 'symbol':
        throw new Unencodable('a symbol');
      case 'bigint':
        if (value < -(2n ** 63n) || value >= 2n ** 64n) throw new Unencodable('a BigInt past 64 bits');
        this.add(9);
        return value;
      case 'function':
        this.add(3); // msgpackr writes undefined
        return undefined;
      case 'object':
        if (value === null) break;
        return this.object(value, depth);
      default:
        break;
    }
    this.add(9);
    return value;
  }

  private object(value: object, depth: number): unknown {
    if (value instanceof Date) {
      this.add(15);
      return value;
    }
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
      this.add(5 + value.byteLength);
      return value;
    }
    if (depth >= MAX_DEPTH) {
      this.bytes = Number.POSITIVE_INFINITY;
      return undefined;
    }
    if (this.open.has(value)) throw new Unencodable('circular');
    this.open.add(value);
    try {
      return this.container(value, depth + 1);
    } finally {
      this.open.delete(value);
    }
  }

  private container(value: object, depth: number): unknown {
    if (Array.isArray(value) || value instanceof Set) {
      const items = Array.isArray(value) ? (value as unknown[]) : value;
      const out: unknown[] = [];
      this.add(5);
      for (const item of items) {
        if (!this.add(0)) break;
        out.push(this.plain(item, depth));
      }
      return out;
    }
    if (value instanceof Map) {
      const out = new Map<unknown, unknown>();
      this.add(5);
      for (const [k, v] of value) {
        if (!this.add(0)) break;
        out.set(this.plain(k, depth), this.plain(v, depth));
      }
      return out;
    }
    if (!isPlainObject(value)) {
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        let json: unknown;
        try {
          json = (toJSON as () => unknown).call(value);
        } catch (e) {
          throw new Unencodable(`toJSON() threw: ${describe(e)}`);
        }
        return json === value ? this.fields(value, depth) : this.plain(json, depth);
      }
    }
    return this.fields(value, depth);
  }

  /** Own enumerable string-keyed properties, as a plain object (what msgpackr writes for any object). */
  private fields(value: object, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.add(5);
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      if (!this.add(0)) break;
      this.add(5 + utf8Bytes(key));
      out[key] = this.plain((value as Record<string, unknown>)[key], depth);
    }
    return out;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
