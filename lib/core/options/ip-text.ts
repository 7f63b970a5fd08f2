/**
 * IP addresses as text and as 16 bytes. Every address is held as 16 bytes, IPv4 mapped into
 * `::ffff:0:0/96`, so one range check covers both families and a peer Node reports as
 * `::ffff:10.0.0.1` (a dual-stack socket) is the same address as `10.0.0.1`.
 */

/** How an address reached us: the families `node:net` names, and a UNIX socket's path. */
export type AddressFamily = 'IPv4' | 'IPv6' | 'unix';

/** A connection's far end: `port` is undefined where none is known (a UNIX path, a forwarded hop without one). */
export interface RemoteAddress {
  readonly address: string;
  readonly port: number | undefined;
  readonly family: AddressFamily;
}

/** An address as 16 bytes, and whether it was written as IPv4 (`a.b.c.d`). */
export interface IpBytes {
  readonly bytes: Uint8Array;
  readonly v4: boolean;
}

const DECIMAL = /^(0|[1-9]\d{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/**
 * Dotted IPv4, strictly: four decimal parts 0..255 with no leading zero (`010` could be read as
 * octal by another parser, so two parsers would disagree on the address). Undefined when it is not.
 */
export function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i += 1) {
    const part = parts[i] as string;
    if (!DECIMAL.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

/**
 * IPv6 text as `inet_pton` reads it: hex groups of 1..4 digits, at most one `::` standing for one
 * or more zero groups, optionally ending in a dotted IPv4. No zone (`%eth0`): callers strip one where
 * it may occur. Undefined when it is not an IPv6 address.
 */
export function parseIPv6(text: string): Uint8Array | undefined {
  if (text.length < 2 || text.length > 45) return undefined;
  const gap = text.indexOf('::');
  if (gap >= 0 && text.indexOf('::', gap + 1) >= 0) return undefined;
  const head = gap >= 0 ? text.slice(0, gap) : text;
  const tail = gap >= 0 ? text.slice(gap + 2) : '';
  const left = groupsOf(head, gap < 0);
  const right = gap >= 0 ? groupsOf(tail, true) : [];
  if (left === undefined || right === undefined) return undefined;
  const count = left.length + right.length;
  if (gap < 0 ? count !== 8 : count > 7) return undefined;
  const words = [...left, ...new Array<number>(8 - count).fill(0), ...right];
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[i * 2] = w >> 8;
    out[i * 2 + 1] = w & 0xff;
  });
  return out;
}

/** A colon-separated run of groups as 16-bit words; a dotted IPv4 may end it when `last`. */
function groupsOf(text: string, last: boolean): number[] | undefined {
  if (text === '') return [];
  const parts = text.split(':');
  const words: number[] = [];
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i] as string;
    if (last && i === parts.length - 1 && part.includes('.')) {
      const v4 = parseIPv4(part);
      if (v4 === undefined) return undefined;
      words.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
    } else if (HEX_GROUP.test(part)) {
      words.push(parseInt(part, 16));
    } else {
      return undefined;
    }
  }
  return words;
}

/** IPv4 or IPv6 text (no zone) as 16 bytes; undefined when it is neither. */
export function parseIp(text: string): IpBytes | undefined {
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return { bytes: mapV4(v4), v4: true };
  const v6 = parseIPv6(text);
  return v6 === undefined ? undefined : { bytes: v6, v4: false };
}

/** `a.b.c.d` as `::ffff:a.b.c.d`. */
export function mapV4(v4: Uint8Array): Uint8Array {
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  out.set(v4, 12);
  return out;
}

/** Whether 16 bytes are an IPv4-mapped address (`::ffff:0:0/96`). */
export function isMappedV4(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i += 1) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

export function formatIPv4(bytes: Uint8Array, at = 0): string {
  return `${bytes[at]}.${bytes[at + 1]}.${bytes[at + 2]}.${bytes[at + 3]}`;
}

/**
 * 16 bytes in the one text form RFC 5952 recommends, so the same address always reads the same
 * whichever header carried it: lowercase, no leading zeros, the longest run of two or more zero
 * groups (the first of equals) as `::`, and an IPv4-mapped address as `::ffff:a.b.c.d` (as Node
 * reports a dual-stack peer).
 */
export function formatIPv6(bytes: Uint8Array): string {
  if (isMappedV4(bytes)) return `::ffff:${formatIPv4(bytes, 12)}`;
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j += 1;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (ws: number[]) => ws.map((w) => w.toString(16)).join(':');
  if (bestAt < 0) return hex(words);
  return `${hex(words.slice(0, bestAt))}::${hex(words.slice(bestAt + bestLen))}`;
}

/** An address as a `RemoteAddress`: IPv4 text for IPv4, else the IPv6 form of `formatIPv6`. */
export function remoteOf(ip: IpBytes, port: number | undefined): RemoteAddress {
  return ip.v4
    ? { address: formatIPv4(ip.bytes, 12), port, family: 'IPv4' }
    : { address: formatIPv6(ip.bytes), port, family: 'IPv6' };
}
