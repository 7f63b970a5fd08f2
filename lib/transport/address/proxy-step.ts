import { Buffer } from 'node:buffer';
import type { RemoteAddress } from '../../core/options/index.js';

/**
 * Why a PROXY protocol header was refused (docs/decisions.md#the-clients-address-behind-a-proxy-issue-53):
 * - `signature`: the first bytes are neither `PROXY ` (v1) nor the 12-byte v2 signature;
 * - `version`: a v2 header whose version nibble is not 2;
 * - `command`: a v2 command other than LOCAL (0) or PROXY (1);
 * - `family`: an address family or transport the protocol does not define (v1 other than TCP4, TCP6,
 *   UNKNOWN; v2 family above 3 or transport above 2);
 * - `oversize`: v1 with no CRLF in its first 107 bytes, or a v2 header longer than the cap;
 * - `truncated`: a v2 address block shorter than its family needs, or the stream ended mid-header;
 * - `malformed`: a v1 line that is not exactly the protocol's (spacing, fields, a bare CR or LF,
 *   bytes outside printable US-ASCII);
 * - `address`: an address or port that is not the family's canonical form (leading zeros, > 65535).
 */
export type ProxyRefusal =
  'signature' | 'version' | 'command' | 'family' | 'oversize' | 'truncated' | 'malformed' | 'address';

/**
 * What the parser says after each chunk:
 * - `more`: no answer yet; feed the next bytes.
 * - `done`: the header is complete. `client` is the address the proxy reports, or `'local'` where
 *   the connection's own peer stands (a v2 LOCAL health check, v2 UNSPEC or a DGRAM transport, v1
 *   UNKNOWN). `rest` holds the bytes after the header: the start of the connection's own traffic.
 * - `refused`: the connection must be closed; `detail` says what was seen, for a log line.
 */
export type ProxyHeaderStep =
  | { readonly state: 'more' }
  | {
      readonly state: 'done';
      readonly version: 1 | 2;
      readonly client: RemoteAddress | 'local';
      readonly rest: Buffer;
    }
  | { readonly state: 'refused'; readonly reason: ProxyRefusal; readonly detail: string };

export const MORE: ProxyHeaderStep = { state: 'more' };

export function refused(reason: ProxyRefusal, detail: string): ProxyHeaderStep {
  return { state: 'refused', reason, detail };
}

/** Whether the bytes held so far agree with `expected` as far as they go. */
export function agreesWith(held: Buffer, expected: Buffer): boolean {
  const n = Math.min(held.length, expected.length);
  return held.subarray(0, n).equals(expected.subarray(0, n));
}
