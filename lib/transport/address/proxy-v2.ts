import { Buffer } from 'node:buffer';
import { type RemoteAddress, mapV4, remoteOf } from '../../core/options/index.js';
import { MORE, type ProxyHeaderStep, agreesWith, refused } from './proxy-step.js';

/** The 12 bytes every v2 header starts with. */
export const V2_SIGNATURE = Buffer.from([
  0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
]);

/** Signature, version/command, family/transport and the 2-byte length. */
export const V2_FIXED_BYTES = 16;

/** A v2 address block per family: two addresses, then two ports for IP. */
const ADDRESS_BYTES = { 1: 12, 2: 36, 3: 216 } as const;

/** The smallest v2 cap that still admits every family's address block (AF_UNIX: 216). */
export const V2_MIN_CAP = V2_FIXED_BYTES + ADDRESS_BYTES[3];

const UNIX_PATH_BYTES = 108;

/**
 * A v2 header at the start of `held`, no longer than `cap` bytes in all. Refuses as soon as the
 * bytes held show it cannot be one: the signature byte by byte, the version and command at the
 * 13th byte, the family and the length at the 16th (before any of the announced bytes arrive, so a
 * length of 65535 is refused without waiting for it). TLVs after the address block are skipped.
 */
export function parseV2(held: Buffer, cap: number): ProxyHeaderStep {
  if (!agreesWith(held, V2_SIGNATURE)) return refused('signature', 'not a PROXY protocol header');
  if (held.length <= 12) return MORE;
  const verCmd = held[12] as number;
  if (verCmd >> 4 !== 2) return refused('version', `v2 version nibble is ${verCmd >> 4}, not 2`);
  const command = verCmd & 0x0f;
  if (command > 1) return refused('command', `v2 command ${command} is neither LOCAL nor PROXY`);
  if (held.length < V2_FIXED_BYTES) return MORE;
  const famProto = held[13] as number;
  const family = famProto >> 4;
  const transport = famProto & 0x0f;
  const length = held.readUInt16BE(14);
  const total = V2_FIXED_BYTES + length;
  if (total > cap) return refused('oversize', `v2 header of ${total} bytes is over the cap of ${cap}`);
  // A LOCAL header's family byte is ignored: the connection is the proxy's own.
  if (command === 1) {
    if (family > 3 || transport > 2)
      return refused('family', `v2 family/transport byte 0x${famProto.toString(16)} is not defined`);
    const need = family === 0 || transport === 0 ? 0 : ADDRESS_BYTES[family as 1 | 2 | 3];
    if (length < need)
      return refused('truncated', `v2 address block of ${length} bytes, family ${family} needs ${need}`);
  }
  if (held.length < total) return MORE;
  const rest = held.subarray(total);
  const usable = command === 1 && family !== 0 && transport === 1;
  const client = usable ? addressOf(held, family as 1 | 2 | 3) : 'local';
  return { state: 'done', version: 2, client, rest };
}

/** The source address of a PROXY STREAM header whose block is complete and long enough. */
function addressOf(held: Buffer, family: 1 | 2 | 3): RemoteAddress {
  const at = V2_FIXED_BYTES;
  if (family === 3)
    return { address: unixPath(held.subarray(at, at + UNIX_PATH_BYTES)), port: undefined, family: 'unix' };
  const size = family === 1 ? 4 : 16;
  const port = held.readUInt16BE(at + 2 * size);
  const raw = new Uint8Array(held.subarray(at, at + size));
  if (family === 2) return remoteOf({ bytes: raw, v4: false }, port);
  return remoteOf({ bytes: mapV4(raw), v4: true }, port);
}

/**
 * A `sun_path` as text: up to its first NUL; a Linux abstract name (a leading NUL) as `@name`, as
 * `ss` and `netstat` show it.
 */
function unixPath(raw: Buffer): string {
  const abstract = raw[0] === 0;
  const from = abstract ? 1 : 0;
  const end = raw.indexOf(0, from);
  const name = raw.toString('utf8', from, end < 0 ? raw.length : end);
  return abstract ? (name === '' ? '' : `@${name}`) : name;
}
