/**
 * The State Store contract (issue 54; lib/core/ports/state-store.ts, docs/decisions.md#durable-state), for
 * every provider: a spec per provider calls `stateStoreContract` with how to open it. Adopt creates a fence
 * row, bumps the epoch, refuses an older ObjectGeneration unless forced; a write applies only at the row's
 * epoch and version; an adopt between two writes of an old owner fences the second; batches answer row by
 * row, in order, and are refused whole when malformed; tombstones keep the epoch until they expire; N
 * handles racing one write: exactly one wins.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type {
  ObjectKey,
  StateAdoptRequest,
  StateAdoptResult,
  StateStore,
  StateWrite,
  StateWriteResult,
} from '../../../lib/core/index.js';
import { Cleanup, outcome } from '../../helpers/index.js';

/** How a provider's spec opens it for the contract. */
export interface StateStoreProvider {
  readonly name: string;
  /**
   * `n` handles on one fresh store that no other test sees (its own table or key prefix), each on its
   * own connections where the provider has any; not started. Tombstones expire after `tombstoneTtlMs`.
   */
  handles(n: number, options: { readonly tombstoneTtlMs: number }): StateStore[] | Promise<StateStore[]>;
  /**
   * Replaces the row of `key` with one no reader of this provider accepts. Absent: the provider holds
   * rows no one else writes (memory), and the unreadable-row case is skipped.
   */
  corrupt?(store: StateStore, key: ObjectKey): Promise<void>;
  /** Removes expired tombstones where the store does not on its own (a periodic sweep). */
  sweep?(store: StateStore): Promise<void>;
}

const DAY_MS = 86_400_000;
/** Short enough to wait out in a test, long enough for the steps before the wait. */
const SHORT_TTL_MS = 400;

const NODE_A = { rid: 'node-a', nodeGeneration: 'g1' };
const NODE_B = { rid: 'node-b', nodeGeneration: 'g1' };

let keys = 0;
/** A key no other test uses. */
export function freshKey(overrides: Partial<ObjectKey> = {}): ObjectKey {
  return { mesh: 'game', kind: 'actor', id: `player-${process.pid}-${++keys}`, ...overrides };
}

/** An adopt request of a `player` by node-a. */
export function claim(
  key: ObjectKey,
  objectGeneration: number,
  extra: Partial<StateAdoptRequest> = {},
): StateAdoptRequest {
  return { key, type: 'player', objectGeneration, owner: NODE_A, ...extra };
}

/** A write of a `player`, schema version 1, no timers. */
export function write(
  key: ObjectKey,
  epoch: number,
  expected: number,
  state: Uint8Array | undefined,
  extra: Partial<StateWrite> = {},
): StateWrite {
  return {
    key,
    type: 'player',
    epoch,
    expected,
    schemaVersion: 1,
    state,
    timers: undefined,
    authority: { objectGeneration: 1, authorityOwnerGeneration: 1, rid: 'node-a' },
    ...extra,
  };
}

export const bytes = (...values: number[]) => Uint8Array.from(values);

export function stateStoreContract(provider: StateStoreProvider): void {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.closeAll());

  /** `n` started handles on one fresh store. */
  async function open(n = 1, tombstoneTtlMs = DAY_MS): Promise<StateStore[]> {
    const stores = await provider.handles(n, { tombstoneTtlMs });
    for (const store of stores) cleanup.add(store);
    await Promise.all(stores.map((s) => s.start()));
    return stores;
  }
  const one = async () => (await open(1))[0]!;
  const adopt = async (store: StateStore, r: StateAdoptRequest): Promise<StateAdoptResult> =>
    (await store.adopt([r]))[0]!;
  const put = async (store: StateStore, w: StateWrite): Promise<StateWriteResult> =>
    (await store.write([w]))[0]!;

  describe(`State Store contract: ${provider.name}`, () => {
    it('adopt of an absent key creates a fence row: epoch 1, version 0, no state, the request type', async () => {
      const store = await one();
      const key = freshKey();
      expect(await adopt(store, claim(key, 1))).toEqual({
        ok: true,
        saved: {
          type: 'player',
          epoch: 1,
          version: 0,
          schemaVersion: 0,
          state: undefined,
          timers: undefined,
          savedAt: expect.any(Number),
        },
      });
    });

    it('each adopt bumps the epoch and keeps state, version, schema version and type', async () => {
      const store = await one();
      const key = freshKey();
      await adopt(store, claim(key, 1));
      expect(await put(store, write(key, 1, 0, bytes(1, 2), { schemaVersion: 3, timers: bytes(9) }))).toEqual(
        {
          ok: true,
          version: 1,
        },
      );
      const again = await adopt(store, claim(key, 2, { type: 'room', owner: NODE_B }));
      expect(again).toEqual({
        ok: true,
        saved: {
          type: 'player',
          epoch: 2,
          version: 1,
          schemaVersion: 3,
          state: bytes(1, 2),
          timers: bytes(9),
          savedAt: expect.any(Number),
        },
      });
      expect(again.ok && again.saved.state).toBeInstanceOf(Uint8Array);
      expect((await adopt(store, claim(key, 2))).ok && 'epoch 3').toBe('epoch 3');
    });

    it('a write applies only at the row epoch and version, as version expected + 1', async () => {
      const store = await one();
      const key = freshKey();
      await adopt(store, claim(key, 1));
      await adopt(store, claim(key, 1));
      expect(await put(store, write(key, 2, 0, bytes(1)))).toEqual({ ok: true, version: 1 });
      expect(await put(store, write(key, 2, 1, bytes(2)))).toEqual({ ok: true, version: 2 });
      expect(await put(store, write(key, 1, 2, bytes(3)))).toEqual({ ok: false, reason: 'fenced', epoch: 2 });
      expect(await put(store, write(key, 3, 2, bytes(3)))).toEqual({ ok: false, reason: 'fenced', epoch: 2 });
      expect(await put(store, write(key, 2, 1, bytes(3)))).toEqual({
        ok: false,
        reason: 'version',
        version: 2,
      });
      expect(await put(store, write(key, 2, 5, bytes(3)))).toEqual({
        ok: false,
        reason: 'version',
        version: 2,
      });
      expect(await put(store, write(freshKey(), 1, 0, bytes(3)))).toEqual({ ok: false, reason: 'absent' });
      const read = await adopt(store, claim(key, 1));
      expect(read.ok && [read.saved.version, read.saved.state]).toEqual([2, bytes(2)]);
    });

    it('an adopt between two writes of an old owner fences the second; the new owner stands', async () => {
      const store = await one();
      const key = freshKey();
      const old = await adopt(store, claim(key, 1));
      if (!old.ok) throw new Error('adopt failed');
      expect(await put(store, write(key, old.saved.epoch, 0, bytes(1)))).toEqual({ ok: true, version: 1 });

      // A takeover: a newer incarnation adopts and reads what the old owner had acknowledged.
      const taker = await adopt(store, claim(key, 2, { owner: NODE_B }));
      if (!taker.ok) throw new Error('takeover adopt failed');
      expect([taker.saved.epoch, taker.saved.version, taker.saved.state]).toEqual([2, 1, bytes(1)]);

      // The old owner's next write, though its version still matches, is fenced.
      expect(await put(store, write(key, old.saved.epoch, 1, bytes(66)))).toEqual({
        ok: false,
        reason: 'fenced',
        epoch: 2,
      });
      const authority = { objectGeneration: 2, authorityOwnerGeneration: 1, rid: 'node-b' };
      expect(await put(store, write(key, 2, 1, bytes(2), { authority }))).toEqual({ ok: true, version: 2 });
      // The old owner cannot adopt back with its older claim either.
      expect(await adopt(store, claim(key, 1))).toEqual({
        ok: false,
        reason: 'newerOwner',
        objectGeneration: 2,
      });
      const last = await adopt(store, claim(key, 2, { owner: NODE_B }));
      expect(last.ok && [last.saved.epoch, last.saved.version, last.saved.state]).toEqual([3, 2, bytes(2)]);
    });

    it('an adopt by an older ObjectGeneration is refused unless forced; an equal one is taken', async () => {
      const store = await one();
      const key = freshKey();
      await adopt(store, claim(key, 5));
      expect(await adopt(store, claim(key, 4))).toEqual({
        ok: false,
        reason: 'newerOwner',
        objectGeneration: 5,
      });
      const equal = await adopt(store, claim(key, 5));
      expect(equal.ok && equal.saved.epoch).toBe(2);
      // The Location Store's counter went backwards: the claimer forces, and its generation is the row's now.
      const forced = await adopt(store, claim(key, 4, { force: true }));
      expect(forced.ok && forced.saved.epoch).toBe(3);
      const after = await adopt(store, claim(key, 4));
      expect(after.ok && after.saved.epoch).toBe(4);
      expect(await adopt(store, claim(key, 3))).toEqual({
        ok: false,
        reason: 'newerOwner',
        objectGeneration: 4,
      });
    });

    it('a batch answers each row, in order: adopts created, bumped and refused; writes of every outcome', async () => {
      const store = await one();
      const [fresh, known, newer] = [freshKey(), freshKey(), freshKey()];
      await adopt(store, claim(known, 1));
      await adopt(store, claim(newer, 9));
      const adopted = await store.adopt([claim(fresh, 1), claim(newer, 2), claim(known, 1)]);
      expect(adopted.map((r) => (r.ok ? r.saved.epoch : r.reason))).toEqual([1, 'newerOwner', 2]);

      const [a, b, c] = [freshKey(), freshKey(), freshKey()];
      await store.adopt([claim(a, 1), claim(b, 1), claim(c, 1)]);
      await put(store, write(c, 1, 0, bytes(1)));
      await adopt(store, claim(b, 1));
      const written = await store.write([
        write(a, 1, 0, bytes(1)),
        write(b, 1, 0, bytes(1)),
        write(c, 1, 0, bytes(2)),
        write(freshKey(), 1, 0, bytes(1)),
      ]);
      expect(written).toEqual([
        { ok: true, version: 1 },
        { ok: false, reason: 'fenced', epoch: 2 },
        { ok: false, reason: 'version', version: 1 },
        { ok: false, reason: 'absent' },
      ]);
      expect(await store.adopt([])).toEqual([]);
      expect(await store.write([])).toEqual([]);
    });

    it('state and timers come back byte for byte; a later write without timers clears them', async () => {
      const store = await one();
      const key = freshKey();
      await adopt(store, claim(key, 1));
      const every = Uint8Array.from({ length: 256 * 257 }, (_, i) => i % 256);
      const mine = Uint8Array.from(every);
      expect(await put(store, write(key, 1, 0, mine, { timers: bytes(0, 255, 0) }))).toEqual({
        ok: true,
        version: 1,
      });
      mine.fill(7); // the caller's buffer is the caller's: the row does not change with it
      const read = await adopt(store, claim(key, 1));
      expect(read.ok && Buffer.from(read.saved.state!).equals(Buffer.from(every))).toBe(true);
      expect(read.ok && read.saved.timers).toEqual(bytes(0, 255, 0));
      expect(await put(store, write(key, 2, 1, bytes(1)))).toEqual({ ok: true, version: 2 });
      const cleared = await adopt(store, claim(key, 1));
      expect(cleared.ok && [cleared.saved.state, cleared.saved.timers]).toEqual([bytes(1), undefined]);
    });

    it('a row per mesh, kind and id; ids with {, }, : and beyond ASCII', async () => {
      const store = await one();
      const id = `{room}:1/é-${process.pid}-${++keys}`;
      const keysOf = [
        { mesh: 'game', kind: 'spot', id },
        { mesh: 'game', kind: 'actor', id },
        { mesh: 'game:2', kind: 'spot', id },
      ] as const;
      for (const key of keysOf) await adopt(store, claim(key, 1));
      await put(store, write(keysOf[0], 1, 0, bytes(1)));
      const read = await store.adopt(keysOf.map((key) => claim(key, 1)));
      expect(read.map((r) => r.ok && [r.saved.epoch, r.saved.version])).toEqual([
        [2, 1],
        [2, 0],
        [2, 0],
      ]);
    });

    it('a tombstone keeps epoch and version without state; adopted again it lives on', async () => {
      const store = await one();
      const key = freshKey();
      await adopt(store, claim(key, 1));
      await put(store, write(key, 1, 0, bytes(1), { timers: bytes(2) }));
      expect(await put(store, write(key, 1, 1, undefined, { tombstone: true }))).toEqual({
        ok: true,
        version: 2,
      });
      // The destroyed owner's epoch still fences: no epoch is given twice under the key.
      expect(await put(store, write(key, 2, 2, bytes(3)))).toEqual({ ok: false, reason: 'fenced', epoch: 1 });
      const revived = await adopt(store, claim(key, 2));
      expect(revived).toEqual({
        ok: true,
        saved: expect.objectContaining({ epoch: 2, version: 2, state: undefined, timers: undefined }),
      });
      expect(await put(store, write(key, 2, 2, bytes(4)))).toEqual({ ok: true, version: 3 });
    });

    it('a tombstone expires after its time, and the key starts again at epoch 1; a live row does not', async () => {
      const [store] = await open(1, SHORT_TTL_MS);
      const [gone, revived, tombstoned] = [freshKey(), freshKey(), freshKey()];
      await store!.adopt([claim(gone, 1), claim(revived, 1), claim(tombstoned, 1)]);
      await store!.write([
        write(gone, 1, 0, undefined, { tombstone: true }),
        write(revived, 1, 0, undefined, { tombstone: true }),
        write(tombstoned, 1, 0, undefined, { tombstone: true }),
      ]);
      await adopt(store!, claim(revived, 1));
      await new Promise((resolve) => setTimeout(resolve, SHORT_TTL_MS * 2));
      await provider.sweep?.(store!);
      expect(await put(store!, write(tombstoned, 1, 1, bytes(1)))).toEqual({ ok: false, reason: 'absent' });
      const read = await store!.adopt([claim(gone, 1), claim(revived, 1)]);
      expect(read.map((r) => r.ok && [r.saved.epoch, r.saved.version])).toEqual([
        [1, 0],
        [3, 1],
      ]);
    });

    it('refuses a whole batch InvalidArgument, nothing done: a key twice, too many rows, a bad row', async () => {
      const store = await one();
      const [a, b] = [freshKey(), freshKey()];
      const refused = async (call: Promise<unknown>, text: RegExp) => {
        const result = await outcome(call);
        expect(result.ok || result.code).toBe('InvalidArgument');
        if (!result.ok) expect((result.error as Error).message).toMatch(text);
      };
      await refused(store.adopt([claim(a, 1), claim(b, 1), claim(a, 2)]), /twice/);
      await refused(store.adopt([claim(a, 1), claim(b, 0)]), /objectGeneration/);
      await refused(
        store.adopt([
          claim(a, 1),
          { ...claim(b, 1), key: { mesh: 'game', kind: 'thing', id: 'x' } } as never,
        ]),
        /key/,
      );
      const many = Array.from({ length: store.batchLimit + 1 }, () => claim(freshKey(), 1));
      await refused(store.adopt(many), /batchLimit/);
      // Nothing was adopted: the first adopt of each key still creates its fence row.
      const first = await store.adopt([claim(a, 1), claim(b, 1), claim(many[0]!.key, 1)]);
      expect(first.map((r) => r.ok && r.saved.epoch)).toEqual([1, 1, 1]);

      await refused(store.write([write(a, 1, 0, bytes(1)), write(a, 1, 1, bytes(2))]), /twice/);
      await refused(store.write([write(a, 1, 0, bytes(1)), write(b, 1, 0, undefined)]), /state/);
      await refused(
        store.write([write(a, 1, 0, bytes(1)), write(b, 1, 0, bytes(1), { tombstone: true })]),
        /tombstone/,
      );
      await refused(store.write([write(a, 1, 0, bytes(1)), write(b, 0, 0, bytes(1))]), /epoch/);
      await refused(store.write([write(a, 1, 0, new Uint8Array(0))]), /state/);
      // Nothing was written: the version is still 0.
      expect(await put(store, write(a, 1, 0, bytes(1)))).toEqual({ ok: true, version: 1 });
    });

    it('four handles start at once; racing one write at one epoch and version, exactly one wins', async () => {
      const stores = await open(4);
      const key = freshKey();
      for (const store of stores) await adopt(store, claim(key, 1));
      const results = await Promise.all(stores.map((s, i) => put(s, write(key, 4, 0, bytes(i + 1)))));
      const won = results.filter((r) => r.ok);
      expect(won).toEqual([{ ok: true, version: 1 }]);
      expect(results.filter((r) => !r.ok)).toEqual(
        Array(3).fill({ ok: false, reason: 'version', version: 1 }),
      );
      const winner = results.findIndex((r) => r.ok);
      const read = await adopt(stores[0]!, claim(key, 1));
      expect(read.ok && read.saved.state).toEqual(bytes(winner + 1));
    });

    it('the rows outlive a handle: another adopts what a closed one wrote', async () => {
      const [first, second] = await open(2);
      const key = freshKey();
      await adopt(first!, claim(key, 1));
      await put(first!, write(key, 1, 0, bytes(5)));
      await first!.close();
      const read = await adopt(second!, claim(key, 2));
      expect(read.ok && [read.saved.epoch, read.saved.version, read.saved.state]).toEqual([2, 1, bytes(5)]);
    });

    (provider.corrupt ? it : it.skip)(
      'an unreadable row fails its own row ProtocolError, never absent',
      async () => {
        const store = await one();
        const [bad, good] = [freshKey(), freshKey()];
        await store.adopt([claim(bad, 1), claim(good, 1)]);
        await provider.corrupt!(store, bad);
        const unreadable = {
          ok: false,
          reason: 'unreadable',
          error: expect.objectContaining({ code: 'ProtocolError' }),
        };
        const adopted = await store.adopt([claim(bad, 1), claim(good, 1)]);
        expect(adopted).toEqual([unreadable, expect.objectContaining({ ok: true })]);
        expect(await store.write([write(bad, 1, 0, bytes(1)), write(good, 2, 0, bytes(1))])).toEqual([
          unreadable,
          { ok: true, version: 1 },
        ]);
      },
    );
  });
}
