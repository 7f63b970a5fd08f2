import { configurationError } from '../errors.js';
import { parseIp } from './ip-text.js';

/**
 * Named ranges an entry may use instead of writing them out (the names Express's `trust proxy`
 * uses): a proxy on the same host, on the link, or on a private network.
 */
const NAMED: ReadonlyMap<string, readonly string[]> = new Map([
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['linklocal', ['169.254.0.0/16', 'fe80::/10']],
  ['uniquelocal', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']],
]);

const PREFIX = /^(0|[1-9]\d{0,2})$/;

/** One range as four 32-bit words of network and mask, IPv4 held inside `::ffff:0:0/96`. */
interface Range {
  readonly net: Int32Array;
  readonly mask: Int32Array;
}

/**
 * The proxies whose word about a client's address is believed: a PROXY protocol header or an
 * `X-Forwarded-For` is honoured only from a peer this matches. Built once from the options (each
 * entry parsed then); a check parses only the peer's address and compares words.
 */
export class TrustedProxies {
  private constructor(
    private readonly ranges: readonly Range[],
    /** The entries as given, for a snapshot or a log line. */
    readonly entries: readonly string[],
  ) {}

  /** Trusts no one: every header is refused. */
  static readonly none = new TrustedProxies([], []);

  /**
   * An allow-list from the options: addresses (`10.0.0.7`, `2001:db8::7`), CIDR ranges (`10.0.0.0/8`,
   * `2001:db8::/32`) and the names `loopback`, `linklocal`, `uniquelocal`. An IPv4-mapped IPv6 entry
   * (`::ffff:10.0.0.7`, `::ffff:10.0.0.0/104`) is the IPv4 one. `undefined` trusts no one. Each fault
   * is a `Configuration` error naming `field[i]`: not a string, not an address, a zone (`%eth0`), a
   * prefix out of range or with bits set past it (`10.0.0.1/8`: write `10.0.0.0/8`).
   */
  static parse(field: string, value: unknown): TrustedProxies {
    if (value === undefined) return TrustedProxies.none;
    if (!Array.isArray(value))
      throw configurationError(field, 'must be an array of addresses or CIDR ranges');
    const ranges: Range[] = [];
    value.forEach((entry: unknown, i) => {
      const at = `${field}[${i}]`;
      if (typeof entry !== 'string') throw configurationError(at, `must be a string, got ${typeof entry}`);
      const named = NAMED.get(entry);
      for (const text of named ?? [entry]) ranges.push(rangeOf(at, text));
    });
    return new TrustedProxies(ranges, [...(value as string[])]);
  }

  /**
   * Whether `address` (as `node:net` reports a peer: `10.0.0.7`, `::ffff:10.0.0.7`, `fe80::1%eth0`)
   * lies in a trusted range. A zone is dropped (an entry names none); text that is no address is
   * not trusted.
   */
  trusts(address: string | undefined): boolean {
    if (address === undefined || this.ranges.length === 0) return false;
    const zone = address.indexOf('%');
    const ip = parseIp(zone < 0 ? address : address.slice(0, zone));
    return ip !== undefined && this.trustsBytes(ip.bytes);
  }

  /** Whether an address already read as 16 bytes (IPv4 mapped) lies in a trusted range. */
  trustsBytes(bytes: Uint8Array): boolean {
    const words = wordsOf(bytes);
    return this.ranges.some(
      (r) =>
        ((words[0] as number) & (r.mask[0] as number)) === r.net[0] &&
        ((words[1] as number) & (r.mask[1] as number)) === r.net[1] &&
        ((words[2] as number) & (r.mask[2] as number)) === r.net[2] &&
        ((words[3] as number) & (r.mask[3] as number)) === r.net[3],
    );
  }
}

/** One entry, an address or `address/prefix`, as a range; throws a `Configuration` error naming `at`. */
function rangeOf(at: string, text: string): Range {
  if (text.includes('%'))
    throw configurationError(at, `a trusted proxy names no zone, got ${JSON.stringify(text)}`);
  const slash = text.indexOf('/');
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (ip === undefined)
    throw configurationError(
      at,
      `expected an IPv4 or IPv6 address or CIDR range, got ${JSON.stringify(text)}`,
    );
  const width = ip.v4 ? 32 : 128;
  let bits = width;
  if (slash >= 0) {
    const prefix = text.slice(slash + 1);
    bits = Number(prefix);
    if (!PREFIX.test(prefix) || bits > width)
      throw configurationError(at, `a prefix must be 0..${width}, got ${JSON.stringify(prefix)}`);
  }
  // IPv4 lives in ::ffff:0:0/96, so an IPv4 entry and its mapped spelling make the same range.
  const mask = maskOf(ip.v4 ? 96 + bits : bits);
  const net = wordsOf(ip.bytes);
  for (let i = 0; i < 4; i += 1) {
    if (((net[i] as number) & ~(mask[i] as number)) !== 0)
      throw configurationError(
        at,
        `${JSON.stringify(text)} has bits set past its prefix; write the network address`,
      );
  }
  return { net, mask };
}

function maskOf(bits: number): Int32Array {
  const mask = new Int32Array(4);
  for (let i = 0; i < 4; i += 1) {
    const take = Math.max(0, Math.min(32, bits - i * 32));
    mask[i] = take === 0 ? 0 : -1 << (32 - take);
  }
  return mask;
}

function wordsOf(bytes: Uint8Array): Int32Array {
  const words = new Int32Array(4);
  for (let i = 0; i < 4; i += 1) {
    words[i] =
      ((bytes[i * 4] as number) << 24) |
      ((bytes[i * 4 + 1] as number) << 16) |
      ((bytes[i * 4 + 2] as number) << 8) |
      (bytes[i * 4 + 3] as number);
  }
  return words;
}
