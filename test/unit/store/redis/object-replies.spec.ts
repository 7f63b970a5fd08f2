/**
 * How the object stores' Lua replies become raw results: each shape the scripts return (see
 * `lib/store/redis/object-scripts.ts`), as Redis hands them to ioredis (integers as numbers, bulk
 * strings as strings).
 */
import { describe, expect, it } from '@jest/globals';
import { casReply, getReply, listReply } from '../../../../lib/store/redis/object-replies.js';

const BODY = '{"type":"room"}';

describe('object store script replies', () => {
  it('get: nothing stored, or the stored version, body and write time', () => {
    expect(getReply([1000])).toEqual({ now: 1000, stored: undefined });
    expect(getReply([1000, 7, BODY, 990])).toEqual({
      now: 1000,
      stored: { version: 7, body: BODY, writtenAt: 990 },
    });
  });

  it('cas: written with its version, deleted, refused with or without a current record, takeover refused', () => {
    expect(casReply([1, 1000, 8])).toEqual({ ok: true, now: 1000, version: 8 });
    expect(casReply([1, 1000])).toEqual({ ok: true, now: 1000, version: undefined });
    expect(casReply([0, 1000])).toEqual({ ok: false, now: 1000, stored: undefined });
    expect(casReply([0, 1000, 9, BODY, 995])).toEqual({
      ok: false,
      now: 1000,
      stored: { version: 9, body: BODY, writtenAt: 995 },
    });
    expect(casReply([2, 1000])).toEqual({ ok: false, now: 1000, stored: undefined, ownerAlive: true });
  });

  it('list: four fields per entry after the clock; a member that names no key is left out', () => {
    const keyOf = (member: string) =>
      member.startsWith('spot:') ? { mesh: 'game', kind: 'spot' as const, id: member.slice(5) } : undefined;
    expect(listReply([1000], keyOf)).toEqual({ now: 1000, entries: [] });
    expect(
      listReply([1000, 'spot:a', 3, BODY, 900, 'junk', 4, BODY, 901, 'spot:b', 5, BODY, 902], keyOf),
    ).toEqual({
      now: 1000,
      entries: [
        { key: { mesh: 'game', kind: 'spot', id: 'a' }, stored: { version: 3, body: BODY, writtenAt: 900 } },
        { key: { mesh: 'game', kind: 'spot', id: 'b' }, stored: { version: 5, body: BODY, writtenAt: 902 } },
      ],
    });
    // A truncated last entry is not read.
    expect(listReply([1000, 'spot:a', 3, BODY], keyOf).entries).toEqual([]);
  });
});
