/**
 * How the State Store scripts' replies become per-row results (`lib/store/redis/state-replies.ts`): each
 * shape the scripts return (`lib/store/redis/state-scripts.ts`), as ioredis hands them over from a
 * `...Buffer` call (integers as numbers, bulk strings as Buffers, nil as null).
 */
import { describe, expect, it } from '@jest/globals';
import { adoptReply, unreadableRow, writeReply } from '../../../../lib/store/redis/state-replies.js';

const unreadable = (why: string) =>
  unreadableRow("State Store 'p' (Redis h:1 prefix s)", "actor 'x' of mesh 'g'", 's:g:actor:x', why);

describe('State Store script replies', () => {
  it('adopt: the row with its bytes copied out, a newer owner, an unreadable row', () => {
    const state = Buffer.from([9, 0, 255, 1, 2]).subarray(1, 4);
    const adopted = adoptReply([1, Buffer.from('player'), 3, 2, 1, 1733600000123, state, null], unreadable);
    expect(adopted).toEqual({
      ok: true,
      saved: {
        type: 'player',
        epoch: 3,
        version: 2,
        schemaVersion: 1,
        savedAt: 1733600000123,
        state: Uint8Array.of(0, 255, 1),
        timers: undefined,
      },
    });
    const saved = adopted.ok ? adopted.saved.state! : new Uint8Array(0);
    expect([Buffer.isBuffer(saved), saved.buffer === state.buffer]).toEqual([false, false]);
    expect(adoptReply([2, 7], unreadable)).toEqual({ ok: false, reason: 'newerOwner', objectGeneration: 7 });
    const bad = adoptReply([3, Buffer.from('epoch is 0')], unreadable);
    expect(bad).toMatchObject({ ok: false, reason: 'unreadable', error: { code: 'ProtocolError' } });
    expect(!bad.ok && bad.reason === 'unreadable' && bad.error.message).toBe(
      "State Store 'p' (Redis h:1 prefix s): the row of actor 'x' of mesh 'g' (key 's:g:actor:x') cannot be read: epoch is 0",
    );
  });

  it('write: written, fenced, another version, absent, unreadable', () => {
    expect(writeReply([1, 4], unreadable)).toEqual({ ok: true, version: 4 });
    expect(writeReply([2, 5], unreadable)).toEqual({ ok: false, reason: 'fenced', epoch: 5 });
    expect(writeReply([3, 6], unreadable)).toEqual({ ok: false, reason: 'version', version: 6 });
    expect(writeReply([4], unreadable)).toEqual({ ok: false, reason: 'absent' });
    expect(writeReply([5, Buffer.from('type is missing')], unreadable)).toMatchObject({
      reason: 'unreadable',
    });
  });

  it('a shape no script answers is thrown, never read as a row', () => {
    expect(() => adoptReply([9], unreadable)).toThrow(/unknown shape/);
    expect(() => writeReply([0, 1], unreadable)).toThrow(/unknown shape/);
    expect(() => adoptReply([1, 'player', 1, 0, 0, 1, null, null] as never, unreadable)).toThrow();
    expect(() => writeReply([1, -1], unreadable)).toThrow();
  });
});
