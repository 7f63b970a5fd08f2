import type { ObjectKey } from '../../core/ports/index.js';
import type { RawCasResult, RawRecord } from '../records/object-records.js';

/** A Lua script's reply, as ioredis hands it over. */
export type Reply = (string | number | null)[];

/** The stored part of a script reply from `at`: version, body, writtenAt (as Redis returns them). */
function rawAt(reply: Reply, at: number): RawRecord {
  return { version: Number(reply[at]), body: String(reply[at + 1]), writtenAt: Number(reply[at + 2]) };
}

/** `OBJECT_GET`'s reply: `[now]` when nothing is stored, `[now, version, body, writtenAt]` otherwise. */
export function getReply(reply: Reply): { now: number; stored: RawRecord | undefined } {
  return { now: Number(reply[0]), stored: reply.length > 1 ? rawAt(reply, 1) : undefined };
}

/**
 * `OBJECT_CAS`'s reply: `[1, now, version]` written (`[1, now]` deleted), `[0, now]` nothing stored
 * that matched, `[0, now, version, body, writtenAt]` another version is there, `[2, now]` a takeover
 * refused because the previous owner's lease is live.
 */
export function casReply(reply: Reply): RawCasResult {
  const now = Number(reply[1]);
  if (reply[0] === 2) return { ok: false, now, stored: undefined, ownerAlive: true };
  if (reply[0] === 1) return { ok: true, now, version: reply.length > 2 ? Number(reply[2]) : undefined };
  return { ok: false, now, stored: reply.length > 2 ? rawAt(reply, 2) : undefined };
}

/**
 * `OBJECT_LIST`'s reply: `[now, member, version, body, writtenAt, member, ...]`; a member that names
 * no key of this store (`keyOf` says `undefined`) is left out.
 */
export function listReply(
  reply: Reply,
  keyOf: (member: string) => ObjectKey | undefined,
): { now: number; entries: { key: ObjectKey; stored: RawRecord }[] } {
  const entries: { key: ObjectKey; stored: RawRecord }[] = [];
  for (let at = 1; at + 3 < reply.length; at += 4) {
    const key = keyOf(String(reply[at]));
    if (key) entries.push({ key, stored: rawAt(reply, at + 1) });
  }
  return { now: Number(reply[0]), entries };
}
