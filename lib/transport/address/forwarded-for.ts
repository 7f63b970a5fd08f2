import { configurationError } from '../../core/errors.js';
import { checkKeys, isRecord } from '../../core/option-checks.js';
import {
  type IpBytes,
  type RemoteAddress,
  type TrustedProxies,
  parseIPv6,
  parseIp,
  remoteOf,
} from '../../core/options/index.js';

/**
 * The most hops read from `X-Forwarded-For`: a real chain is a CDN and a load balancer or two, so a
 * longer list is a client padding it, and the walk stays a few comparisons.
 */
export const DEFAULT_FORWARDED_MAX_ENTRIES = 16;

/** The longest header, all values joined: 16 bracketed IPv6 hops with ports fit with room to spare. */
export const DEFAULT_FORWARDED_MAX_BYTES = 1024;

export interface ForwardedForOptions {
  /** @default 16 */
  maxEntries?: number;
  /** Characters of the header, its values joined (Node reads header bytes as Latin-1: one each). @default 1024 */
  maxBytes?: number;
}

export interface NormalizedForwardedForOptions {
  readonly maxEntries: number;
  readonly maxBytes: number;
}

/** `options` checked, each fault a `Configuration` error naming `field` and the key. */
export function normalizeForwardedForOptions(field: string, options: unknown): NormalizedForwardedForOptions {
  if (options === undefined)
    return { maxEntries: DEFAULT_FORWARDED_MAX_ENTRIES, maxBytes: DEFAULT_FORWARDED_MAX_BYTES };
  if (!isRecord(options)) throw configurationError(field, 'must be an object { maxEntries, maxBytes }');
  checkKeys(field, options, ['maxEntries', 'maxBytes']);
  return {
    maxEntries: boundedInt(`${field}.maxEntries`, options.maxEntries, DEFAULT_FORWARDED_MAX_ENTRIES, 1, 256),
    maxBytes: boundedInt(`${field}.maxBytes`, options.maxBytes, DEFAULT_FORWARDED_MAX_BYTES, 7, 16384),
  };
}

function boundedInt(field: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw configurationError(field, `must be an integer ${min}..${max}, got ${String(value)}`);
  return value;
}

/**
 * Whose address a WebSocket upgrade carries:
 * - `direct`: no header; the client is the peer.
 * - `forwarded`: a trusted peer's header named the client (the first untrusted hop from the right,
 *   or the leftmost when every hop is trusted).
 * - `untrusted`: a header from a peer not trusted; not read, not believed: the client is the peer,
 *   and the listener counts it.
 * - `refused`: a trusted peer's header over the bounds (`oversize`) or with a hop that is no address
 *   (`malformed`) where the walk reached it; the listener refuses the upgrade and counts it.
 */
export type ForwardedFor =
  | { readonly outcome: 'direct' | 'forwarded' | 'untrusted'; readonly client: RemoteAddress }
  | { readonly outcome: 'refused'; readonly reason: 'oversize' | 'malformed'; readonly detail: string };

const PORT = /^(0|[1-9]\d{0,4})$/;

/**
 * The client of an upgrade request from `peer` (the socket's far end) and its `X-Forwarded-For`
 * value(s) as Node hands them (`req.headers[...]`, joined, or each of `rawHeaders`'). Each proxy
 * appends the address it received from, so the list is read from the right: a trusted hop is a
 * proxy of ours, the first untrusted one is the client. Nothing is parsed unless `peer` is trusted.
 */
export function forwardedClient(
  peer: RemoteAddress,
  header: string | readonly string[] | undefined,
  trusted: TrustedProxies,
  options: NormalizedForwardedForOptions,
): ForwardedFor {
  const joined = typeof header === 'string' ? header : (header ?? []).join(',');
  if (joined.trim() === '') return { outcome: 'direct', client: peer };
  if (!trusted.trusts(peer.address)) return { outcome: 'untrusted', client: peer };
  if (joined.length > options.maxBytes)
    return refusedHeader('oversize', `${joined.length} characters, over ${options.maxBytes}`);
  const hops = joined.split(',');
  if (hops.length > options.maxEntries)
    return refusedHeader('oversize', `${hops.length} hops, over ${options.maxEntries}`);
  let client: RemoteAddress | undefined;
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const text = (hops[i] as string).trim();
    const hop = hopOf(text);
    if (hop === undefined)
      return refusedHeader(
        'malformed',
        `hop ${i + 1} of ${hops.length} is no address: ${JSON.stringify(text.slice(0, 64))}`,
      );
    client = remoteOf(hop.ip, hop.port);
    if (!trusted.trustsBytes(hop.ip.bytes)) break;
  }
  return { outcome: 'forwarded', client: client as RemoteAddress };
}

function refusedHeader(reason: 'oversize' | 'malformed', detail: string): ForwardedFor {
  return { outcome: 'refused', reason, detail: `X-Forwarded-For: ${detail}` };
}

/**
 * One hop: `10.0.0.7`, `2001:db8::7`, or with a port as some proxies write it, `10.0.0.7:5000` or
 * `[2001:db8::7]:5000` (and `[2001:db8::7]`). No zone, no `unknown`, no obfuscated names.
 */
function hopOf(text: string): { ip: IpBytes; port: number | undefined } | undefined {
  let host = text;
  let port: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    host = text.slice(1, close);
    const after = text.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return undefined;
      port = after.slice(1);
    }
    const v6 = parseIPv6(host);
    return v6 === undefined ? undefined : withPort({ bytes: v6, v4: false }, port);
  }
  const colon = text.indexOf(':');
  if (colon >= 0 && colon === text.lastIndexOf(':')) {
    host = text.slice(0, colon);
    port = text.slice(colon + 1);
  }
  const ip = parseIp(host);
  if (ip === undefined || (port !== undefined && !ip.v4)) return undefined;
  return withPort(ip, port);
}

function withPort(
  ip: IpBytes,
  port: string | undefined,
): { ip: IpBytes; port: number | undefined } | undefined {
  if (port === undefined) return { ip, port: undefined };
  if (!PORT.test(port) || Number(port) > 65535) return undefined;
  return { ip, port: Number(port) };
}
