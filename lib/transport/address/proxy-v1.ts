import { Buffer } from 'node:buffer';
import { mapV4, parseIPv4, parseIPv6, remoteOf } from '../../core/options/index.js';
import { MORE, type ProxyHeaderStep, agreesWith, refused } from './proxy-step.js';

/** The protocol's longest v1 line, CRLF included (`PROXY UNKNOWN` with two full IPv6 addresses). */
export const V1_MAX_BYTES = 107;

export const V1_PREFIX = Buffer.from('PROXY ', 'latin1');

const CR = 0x0d;
const LF = 0x0a;
const PORT = /^(0|[1-9]\d{0,4})$/;

/**
 * A v1 header at the start of `held`: `PROXY TCP4|TCP6 src dst sport dport\r\n` or `PROXY UNKNOWN
 * ...\r\n`. Answers `more` until a CRLF arrives within 107 bytes, and refuses as soon as the bytes
 * held cannot become one (a wrong prefix, a bare CR or LF, 107 bytes with no CRLF).
 */
export function parseV1(held: Buffer): ProxyHeaderStep {
  if (!agreesWith(held, V1_PREFIX)) return refused('signature', 'not a PROXY protocol header');
  const scan = Math.min(held.length, V1_MAX_BYTES);
  let cr = -1;
  for (let i = 0; i < scan; i += 1) {
    const byte = held[i] as number;
    if (byte === LF) return refused('malformed', 'a v1 line ends with LF alone');
    if (byte === CR) {
      if (i + 2 > V1_MAX_BYTES) break;
      if (i + 1 >= held.length) return MORE;
      if (held[i + 1] !== LF) return refused('malformed', 'a v1 line has CR without LF');
      cr = i;
      break;
    }
    if (byte < 0x20 || byte > 0x7e)
      return refused('malformed', 'a v1 line holds a byte outside US-ASCII text');
  }
  if (cr < 0) {
    return held.length >= V1_MAX_BYTES
      ? refused('oversize', `no CRLF in the first ${V1_MAX_BYTES} bytes of a v1 header`)
      : MORE;
  }
  const rest = held.subarray(cr + 2);
  const fields = held.toString('latin1', 0, cr).split(' ');
  const proto = fields[1];
  if (proto === 'UNKNOWN') return { state: 'done', version: 1, client: 'local', rest };
  if (proto !== 'TCP4' && proto !== 'TCP6')
    return refused('family', `v1 protocol ${JSON.stringify(proto)} is not TCP4, TCP6 or UNKNOWN`);
  if (fields.length !== 6)
    return refused('malformed', `a v1 ${proto} line has ${fields.length - 2} fields, not 4`);
  const parse = proto === 'TCP4' ? parseIPv4 : parseIPv6;
  const [src, dst, sport, dport] = fields.slice(2) as [string, string, string, string];
  const source = parse(src);
  if (source === undefined || parse(dst) === undefined)
    return refused('address', `a v1 ${proto} line's addresses are not canonical ${proto}`);
  if (!isPort(sport) || !isPort(dport)) return refused('address', `a v1 port is not a decimal 0..65535`);
  const client = remoteOf(
    proto === 'TCP4' ? { bytes: mapV4(source), v4: true } : { bytes: source, v4: false },
    Number(sport),
  );
  return { state: 'done', version: 1, client, rest };
}

function isPort(text: string): boolean {
  return PORT.test(text) && Number(text) <= 65535;
}
