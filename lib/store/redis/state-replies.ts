import { Buffer } from 'node:buffer';
import { ZLinkError } from '../../core/errors.js';
import type { StateAdoptResult, StateWriteResult, UnreadableState } from '../../core/ports/index.js';
import {
  ADOPTED,
  ADOPT_NEWER_OWNER,
  ADOPT_UNREADABLE,
  WRITTEN,
  WRITE_ABSENT,
  WRITE_FENCED,
  WRITE_UNREADABLE,
  WRITE_VERSION,
} from './state-scripts.js';

/**
 * A State Store script's reply as ioredis hands it over from a `...Buffer` call: integers as numbers,
 * bulk strings as Buffers (so saved bytes come back as they went), nil as `null`.
 */
export type StateReply = readonly (number | Buffer | null)[];

/** Names the row a reply is about, for the `ProtocolError` of a row that cannot be read. */
export type RowName = (why: string) => UnreadableState;

/** `ProtocolError` naming `store`'s row of `what` (`actor 'p-1' of mesh 'game'`) at `key`, and why. */
export function unreadableRow(store: string, what: string, key: string, why: string): UnreadableState {
  const error = new ZLinkError(
    'ProtocolError',
    `${store}: the row of ${what} (key '${key}') cannot be read: ${why}`,
    { details: { key } },
  );
  return { ok: false, reason: 'unreadable', error };
}

const count = (value: unknown): number => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error('not a count');
  return value;
};
const text = (value: unknown): string => {
  if (!Buffer.isBuffer(value)) throw new Error('not a bulk string');
  return value.toString('utf8');
};
/** Saved bytes, copied out of the reply's buffer (a slice of a socket read that may hold far more). */
const bytes = (value: unknown): Uint8Array | undefined => {
  if (value === null) return undefined;
  if (!Buffer.isBuffer(value)) throw new Error('not bytes');
  return new Uint8Array(value);
};

/**
 * `STATE_ADOPT`'s reply: `[1, type, epoch, version, schemaVersion, savedAt, state, timers]` adopted,
 * `[2, objectGeneration]` a newer owner, `[3, why]` unreadable. Throws on any other shape (our own
 * script answered what it never does: the batch fails, no row is guessed).
 */
export function adoptReply(reply: StateReply, unreadable: RowName): StateAdoptResult {
  switch (reply[0]) {
    case ADOPTED:
      return {
        ok: true,
        saved: {
          type: text(reply[1]),
          epoch: count(reply[2]),
          version: count(reply[3]),
          schemaVersion: count(reply[4]),
          savedAt: count(reply[5]),
          state: bytes(reply[6]),
          timers: bytes(reply[7]),
        },
      };
    case ADOPT_NEWER_OWNER:
      return { ok: false, reason: 'newerOwner', objectGeneration: count(reply[1]) };
    case ADOPT_UNREADABLE:
      return unreadable(text(reply[1]));
    default:
      throw new Error(`an adopt reply of unknown shape (${String(reply[0])})`);
  }
}

/**
 * `STATE_WRITE`'s reply: `[1, version]` written, `[2, epoch]` fenced, `[3, version]` another version,
 * `[4]` absent, `[5, why]` unreadable. Throws on any other shape.
 */
export function writeReply(reply: StateReply, unreadable: RowName): StateWriteResult {
  switch (reply[0]) {
    case WRITTEN:
      return { ok: true, version: count(reply[1]) };
    case WRITE_FENCED:
      return { ok: false, reason: 'fenced', epoch: count(reply[1]) };
    case WRITE_VERSION:
      return { ok: false, reason: 'version', version: count(reply[1]) };
    case WRITE_ABSENT:
      return { ok: false, reason: 'absent' };
    case WRITE_UNREADABLE:
      return unreadable(text(reply[1]));
    default:
      throw new Error(`a write reply of unknown shape (${String(reply[0])})`);
  }
}
