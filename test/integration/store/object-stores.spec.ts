/**
 * The object-store contract (issue 15 item 1; docs/architecture.md#stores-and-authority), once per store and backend: the
 * Authority and Relocation Stores on a private `redis-server` and in memory. One record per (mesh,
 * kind, id); every change a compare-and-swap on the store-assigned StoreVersion; a stale version is
 * refused with the current record; versions never come back after a delete; listing by NodeRid;
 * names with `{`, `}` and `:`; and N clients racing one CAS on one expected version: exactly one
 * wins, every round.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { CasResult, DeleteResult, StoreVersion, VersionedStore } from '../../../lib/core/index.js';
import { MemoryAuthorityStore, MemoryRelocationStore } from '../../../lib/store/index.js';
import { RedisAuthorityStore, RedisRelocationStore } from '../../../lib/store/redis/redis-object-stores.js';
import { Cleanup, outcome } from '../../helpers/index.js';
import { useRedis } from './fixtures.js';
import { AUTHORITY_CASE, type ObjectStoreCase, RELOCATION_CASE, freshKey } from './object-fixtures.js';

const redisServer = useRedis();

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/** `n` handles on one store: separate Redis connections, or the one memory store `n` times. */
type Clients = (n: number) => VersionedStore<unknown>[];

function redisClients(make: (keyPrefix: string) => Store): Clients {
  return (n) => {
    const keyPrefix = `t${Math.random()}`;
    return Array.from({ length: n }, () => cleanup.add(make(keyPrefix)));
  };
}

function memoryClients(make: () => Store): Clients {
  return (n) => {
    const store = cleanup.add(make());
    return Array.from({ length: n }, () => store);
  };
}

type Store = VersionedStore<unknown>;
const url = () => redisServer.current.url;
const stores = [
  [AUTHORITY_CASE, RedisAuthorityStore, MemoryAuthorityStore],
  [RELOCATION_CASE, RedisRelocationStore, MemoryRelocationStore],
] as const;
/** Each store on Redis and in memory. */
const matrix: [string, ObjectStoreCase<unknown>, Clients][] = stores.flatMap(
  ([subject, OnRedis, InMemory]) => [
    [
      OnRedis.name,
      subject as ObjectStoreCase<unknown>,
      redisClients((keyPrefix) => new OnRedis({ redis: url(), keyPrefix }) as Store),
    ],
    [InMemory.name, subject as ObjectStoreCase<unknown>, memoryClients(() => new InMemory() as Store)],
  ],
);

describe.each(matrix)('%s', (_name, subject, clients) => {
  const one = () => clients(1)[0]!;
  const { sample, list } = subject;

  it('get of a missing record is undefined; a CAS on absent creates it; get returns it with its version', async () => {
    const store = one();
    const key = freshKey();
    expect(await store.get(key)).toBeUndefined();
    const created = await store.compareAndSet(key, 'absent', sample('node-a'));
    expect(created).toEqual({ ok: true, version: expect.any(Number), writtenAt: expect.any(Number) });
    const read = await store.get(key);
    expect(read).toEqual({
      key,
      record: sample('node-a'),
      version: created.ok && created.version,
      writtenAt: created.ok && created.writtenAt,
      readAt: expect.any(Number),
    });
    expect(read!.readAt).toBeGreaterThanOrEqual(read!.writtenAt);
  });

  it('a CAS on the current version writes and assigns a larger one; a stale version is refused with the current record', async () => {
    const store = one();
    const key = freshKey();
    const first = await store.compareAndSet(key, 'absent', sample('node-a', 1));
    if (!first.ok) throw new Error('create failed');
    const second = await store.compareAndSet(key, first.version, sample('node-a', 2));
    if (!second.ok) throw new Error('update failed');
    expect(second.version).toBeGreaterThan(first.version);

    const current = {
      key,
      record: sample('node-a', 2),
      version: second.version,
      writtenAt: second.writtenAt,
    };
    const stale = await store.compareAndSet(key, first.version, sample('node-a', 3));
    expect(stale).toEqual({ ok: false, current: { ...current, readAt: expect.any(Number) } });
    const taken = await store.compareAndSet(key, 'absent', sample('node-a', 3));
    expect(taken).toEqual({ ok: false, current: { ...current, readAt: expect.any(Number) } });
    expect((await store.get(key))?.record).toEqual(sample('node-a', 2));

    // An expected version on a record that is not there: refused, nothing there.
    expect(await store.compareAndSet(freshKey(), first.version, sample('node-a'))).toEqual({
      ok: false,
      current: undefined,
    });
  });

  it('delete is a CAS too; a re-created record never gets a version seen before', async () => {
    const store = one();
    const key = freshKey();
    const first = await store.compareAndSet(key, 'absent', sample('node-a', 1));
    const second = first.ok && (await store.compareAndSet(key, first.version, sample('node-a', 2)));
    if (!first.ok || !second || !second.ok) throw new Error('writes failed');
    const refused = await store.delete(key, first.version);
    expect(refused).toEqual({ ok: false, current: expect.objectContaining({ version: second.version }) });
    expect(await store.delete(key, second.version)).toEqual({ ok: true });
    expect(await store.get(key)).toBeUndefined();
    expect(await store.delete(key, second.version)).toEqual({ ok: false, current: undefined });
    const again = await store.compareAndSet(key, 'absent', sample('node-a', 3));
    expect(again.ok && again.version).toBeGreaterThan(second.version);
    // The old version does not match the new record.
    expect((await store.compareAndSet(key, second.version, sample('node-a', 4))).ok).toBe(false);
  });

  it('lists by NodeRid: a record moves between lists with its node, leaves on delete, other meshes apart', async () => {
    const store = one();
    const a = freshKey();
    const b = freshKey({ kind: 'actor' });
    const elsewhere = freshKey({ mesh: 'other' });
    const va = await store.compareAndSet(a, 'absent', sample('node-x'));
    await store.compareAndSet(b, 'absent', sample('node-x'));
    await store.compareAndSet(elsewhere, 'absent', sample('node-x'));
    const listed = async (rid: string) => (await list(store, 'game', rid)).map((v) => v.key.id).sort();
    expect(await listed('node-x')).toEqual([a.id, b.id].sort());
    expect((await list(store, 'game', 'node-x')).find((v) => v.key.id === b.id)).toEqual({
      key: b,
      record: sample('node-x'),
      version: expect.any(Number),
      writtenAt: expect.any(Number),
      readAt: expect.any(Number),
    });

    if (!va.ok) throw new Error('create failed');
    const moved = await store.compareAndSet(a, va.version, sample('node-y'));
    expect(await listed('node-x')).toEqual([b.id]);
    expect(await listed('node-y')).toEqual([a.id]);
    if (!moved.ok) throw new Error('move failed');
    await store.delete(a, moved.version);
    expect(await listed('node-y')).toEqual([]);
    expect((await list(store, 'other', 'node-x')).map((v) => v.key)).toEqual([elsewhere]);
  });

  it('names with braces and colons are their own keys and round-trip', async () => {
    const store = one();
    const odd = { mesh: 'm:{a}', kind: 'spot' as const, id: 'x:{y}:z' };
    const plain = { mesh: 'm', kind: 'spot' as const, id: 'x' };
    await store.compareAndSet(odd, 'absent', sample('r:{1}'));
    expect((await store.get(odd))?.record).toEqual(sample('r:{1}'));
    expect(await store.get(plain)).toBeUndefined();
    expect(await store.get({ ...odd, mesh: 'm' })).toBeUndefined();
    expect((await list(store, 'm:{a}', 'r:{1}')).map((v) => v.key)).toEqual([odd]);
    expect(await list(store, 'm', 'r:{1}')).toEqual([]);
    expect(await list(store, 'm:{a}', 'r')).toEqual([]);
  });

  it('refuses a bad key, a bad record or a bad expected version with InvalidArgument, writing nothing', async () => {
    const store = one();
    const key = freshKey();
    const bad: Promise<unknown>[] = [
      store.compareAndSet({ ...key, kind: 'queue' as 'spot' }, 'absent', sample('node-a')),
      store.compareAndSet({ ...key, id: '' }, 'absent', sample('node-a')),
      store.compareAndSet(key, 'absent', { type: 'room' }),
      store.compareAndSet(key, 0, sample('node-a')),
      store.compareAndSet(key, 1.5, sample('node-a')),
      store.delete(key, 'absent' as unknown as StoreVersion),
      store.get({ ...key, mesh: '' }),
    ];
    for (const result of await Promise.all(bad.map((p) => outcome(p)))) {
      expect(result).toMatchObject({ ok: false, code: 'InvalidArgument' });
    }
    expect(await store.get(key)).toBeUndefined();
  });

  it('8 clients racing one CAS on the same expected version: exactly one wins, every one of 50 rounds', async () => {
    const racers = clients(8);
    const key = freshKey();
    let expected: StoreVersion | 'absent' = 'absent';
    for (let round = 0; round < 50; round++) {
      // Every tenth round races a delete instead; the next round then races the create.
      const deleting: boolean = expected !== 'absent' && round % 10 === 9;
      const results: (CasResult<unknown> | DeleteResult<unknown>)[] = await Promise.all(
        racers.map((store, i) =>
          deleting
            ? store.delete(key, expected as StoreVersion)
            : store.compareAndSet(key, expected, sample(`node-${i}`, round)),
        ),
      );
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect({ round, winners: winners.length }).toEqual({ round, winners: 1 });
      const winner = results[winners[0]!]!;
      const held = await racers[0]!.get(key);
      if (deleting) {
        expect(held).toBeUndefined();
        expected = 'absent';
        continue;
      }
      const version: StoreVersion = (winner as { version: StoreVersion }).version;
      expect(held).toMatchObject({ version, record: sample(`node-${winners[0]}`, round) });
      // Every loser ran after the winner (before it, the version was still the expected one).
      for (const r of results) if (!r.ok) expect(r.current?.version).toBe(version);
      expected = version;
    }
  });
});
