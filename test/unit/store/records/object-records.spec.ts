/**
 * The object-store port over a backend (`ObjectRecordStore`): what it checks before a backend is asked,
 * and how it reads back what a backend returns — the same for Redis and memory. The backend here is a
 * scripted `RawObjectRecords` (pure logic: no store involved); the backends themselves are tested
 * against a real redis-server in test/integration/store.
 */
import { describe, expect, it } from '@jest/globals';
import type { AuthorityRecord, ObjectKey, StoreVersion } from '../../../../lib/core/index.js';
import {
  AuthorityRecords,
  type RawCasResult,
  type RawObjectRecords,
  type RawRecord,
} from '../../../../lib/store/records/object-records.js';

const KEY: ObjectKey = { mesh: 'game', kind: 'spot', id: 'room-1' };
const RECORD: AuthorityRecord = {
  type: 'room',
  state: 'ready',
  owner: { rid: 'node-a', nodeGeneration: 'g1' },
  objectGeneration: 7,
  authorityOwnerGeneration: 1,
  ownerLeaseGeneration: 1,
};

/** A backend that answers every step with `answer` and records what it was asked. */
function backend(answer: { get?: RawRecord; cas?: RawCasResult }) {
  const asked: unknown[][] = [];
  const raw: RawObjectRecords = {
    get: async (key) => {
      asked.push(['get', key]);
      return { now: 1000, stored: answer.get };
    },
    cas: async (...args) => {
      asked.push(['cas', ...args]);
      return answer.cas ?? { ok: true, now: 1000, version: 8 };
    },
    list: async () => ({ now: 1000, entries: [] }),
    close: async () => undefined,
  };
  return { store: new AuthorityRecords(raw), asked };
}

describe('ObjectRecordStore (Authority) over a backend', () => {
  it('refuses a bad key, a bad expected version or a record that is not one before asking the backend', async () => {
    const { store, asked } = backend({});
    await expect(store.get({ ...KEY, kind: 'room' as never })).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    await expect(store.compareAndSet(KEY, 0 as StoreVersion, RECORD)).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    await expect(store.delete(KEY, 'absent' as never)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(
      store.compareAndSet(KEY, 'absent', { ...RECORD, state: 'gone' as never }),
    ).rejects.toMatchObject({
      code: 'InvalidArgument',
    });
    expect(asked).toEqual([]);
  });

  it('writes the record as JSON listed under its owner, and maps the answer', async () => {
    const { store, asked } = backend({});
    await expect(store.compareAndSet(KEY, 'absent', RECORD)).resolves.toEqual({
      ok: true,
      version: 8,
      writtenAt: 1000,
    });
    expect(asked).toEqual([['cas', KEY, 'absent', JSON.stringify(RECORD), ['node-a']]]);
  });

  it('a stored record that cannot be read is a ProtocolError naming its version, never a guess', async () => {
    const { store } = backend({ get: { version: 5, body: '{"type":', writtenAt: 900 } });
    await expect(store.get(KEY)).rejects.toMatchObject({ code: 'ProtocolError', details: { version: 5 } });
  });

  it('a refused write reads back the current record with the store clock', async () => {
    const stored = { version: 9, body: JSON.stringify(RECORD), writtenAt: 995 };
    const { store } = backend({ cas: { ok: false, now: 1000, stored } });
    await expect(store.compareAndSet(KEY, 8, RECORD)).resolves.toEqual({
      ok: false,
      current: { key: KEY, record: RECORD, version: 9, writtenAt: 995, readAt: 1000 },
    });
  });

  it("takeOver: the store's 'owner alive' is its own answer; a removal lists nobody", async () => {
    const alive = backend({ cas: { ok: false, now: 1000, stored: undefined, ownerAlive: true } });
    await expect(alive.store.takeOver(KEY, 8, RECORD, RECORD.owner)).resolves.toEqual({
      ok: false,
      ownerAlive: true,
    });
    const removed = backend({ cas: { ok: true, now: 1000, version: undefined } });
    await expect(removed.store.takeOver(KEY, 8, undefined, RECORD.owner)).resolves.toEqual({
      ok: true,
      version: undefined,
      writtenAt: 1000,
    });
    expect(removed.asked).toEqual([['cas', KEY, 8, undefined, [], [RECORD.owner]]]);
  });
});
