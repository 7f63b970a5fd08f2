import { describe, expect, it } from '@jest/globals';
import { type AuthorityStore, ZLinkError } from '../../../../lib/core/index.js';
import { AuthorityResolver } from '../../../../lib/spot/resolve/index.js';
import { MemoryAuthorityStore } from '../../../../lib/store/index.js';
import { FakeClock, FakeLeases, MESH, RUN_A, RUN_B, authority } from '../fixtures.js';

/**
 * The resolver's four closed results (docs/protocol.md#resolver-results), each from a record in a memory
 * Authority Store: Ready with a live owner lease → ReadyRoute with every fence; no record (never
 * created, or released) → Missing; a record whose owner run holds no lease, or that is creating or
 * releasing → Unavailable; a failed read → StoreFailure with the error.
 */

function setup() {
  const store = new MemoryAuthorityStore();
  const clock = new FakeClock();
  const leases = new FakeLeases();
  leases.set(RUN_A, clock.t + 9000);
  const resolver = new AuthorityResolver({ mesh: MESH, store, leases, clock });
  return { store, clock, leases, resolver };
}

describe('AuthorityResolver', () => {
  it('a Ready authority whose owner holds a lease is a ReadyRoute with the fences and the admission deadline', async () => {
    const { store, resolver, clock } = setup();
    const record = authority({ objectGeneration: 4, authorityOwnerGeneration: 2, ownerLeaseGeneration: 7 });
    const written = await store.compareAndSet({ mesh: MESH, kind: 'spot', id: 'room-1' }, 'absent', record);
    expect(await resolver.resolve('spot', 'room-1')).toEqual({
      tag: 'ReadyRoute',
      key: { mesh: MESH, kind: 'spot', id: 'room-1' },
      type: 'room',
      owner: RUN_A,
      objectGeneration: 4,
      authorityOwnerGeneration: 2,
      ownerLeaseGeneration: 7,
      storeVersion: written.ok && written.version,
      admissionDeadline: clock.t + 9000,
      address: {
        objectKind: 'spot',
        id: 'room-1',
        fences: { owner: RUN_A, objectGeneration: 4, authorityOwnerGeneration: 2, ownerLeaseGeneration: 7 },
        bytes: expect.any(Uint8Array),
      },
    });
  });

  it('no record is Missing; so is a record whose release completed (deleted)', async () => {
    const { store, resolver } = setup();
    expect(await resolver.resolve('actor', 'nobody')).toEqual({
      tag: 'Missing',
      key: { mesh: MESH, kind: 'actor', id: 'nobody' },
    });
    const key = { mesh: MESH, kind: 'spot', id: 'room-2' } as const;
    const made = await store.compareAndSet(key, 'absent', authority());
    const releasing = await store.compareAndSet(key, made.ok ? made.version : 0, authority({}, 'releasing'));
    expect(await resolver.resolve('spot', 'room-2')).toMatchObject({
      tag: 'Unavailable',
      reason: 'releasing',
    });
    await store.delete(key, releasing.ok ? releasing.version : 0);
    expect(await resolver.resolve('spot', 'room-2')).toEqual({ tag: 'Missing', key });
  });

  it('kinds are apart: a Spot record is not an Actor of the same id', async () => {
    const { store, resolver } = setup();
    await store.compareAndSet({ mesh: MESH, kind: 'spot', id: 'x' }, 'absent', authority());
    expect((await resolver.resolve('actor', 'x')).tag).toBe('Missing');
    expect((await resolver.resolve('spot', 'x')).tag).toBe('ReadyRoute');
  });

  it.each(['creating', 'releasing'] as const)(
    'a %s authority with a live owner is Unavailable with that reason and the record read',
    async (state) => {
      const { store, resolver } = setup();
      const key = { mesh: MESH, kind: 'spot', id: `r-${state}` } as const;
      const made = await store.compareAndSet(key, 'absent', authority({}, state));
      const result = await resolver.resolve('spot', key.id);
      expect(result).toMatchObject({ tag: 'Unavailable', key, reason: state });
      expect(result.tag === 'Unavailable' && result.authority.version).toBe(made.ok && made.version);
    },
  );

  it.each([
    ['no lease for the owner run at all', (l: FakeLeases) => l.set(RUN_A, undefined)],
    [
      'a lease of the same NodeRid but another generation only',
      (l: FakeLeases) => {
        l.set(RUN_A, undefined);
        l.set({ rid: RUN_A.rid, nodeGeneration: 'ga2' }, Number.MAX_SAFE_INTEGER);
      },
    ],
  ])(
    'a Ready authority whose owner holds no lease (%s) is Unavailable: ownerLeaseGone',
    async (_name, arrange) => {
      const { store, resolver, leases } = setup();
      await store.compareAndSet({ mesh: MESH, kind: 'actor', id: 'p1' }, 'absent', authority());
      arrange(leases);
      expect(await resolver.resolve('actor', 'p1')).toMatchObject({
        tag: 'Unavailable',
        reason: 'ownerLeaseGone',
      });
    },
  );

  it('a lease whose admission deadline has passed is gone; so it is for a creating record', async () => {
    const { store, resolver, clock } = setup();
    await store.compareAndSet({ mesh: MESH, kind: 'spot', id: 'r' }, 'absent', authority());
    await store.compareAndSet({ mesh: MESH, kind: 'spot', id: 'c' }, 'absent', authority({}, 'creating'));
    clock.advance(9000);
    expect(await resolver.resolve('spot', 'r')).toMatchObject({
      tag: 'Unavailable',
      reason: 'ownerLeaseGone',
    });
    expect(await resolver.resolve('spot', 'c')).toMatchObject({
      tag: 'Unavailable',
      reason: 'ownerLeaseGone',
    });
  });

  it('the owner the record names is the one judged, not any live node', async () => {
    const { store, resolver, leases } = setup();
    leases.set(RUN_B, Number.MAX_SAFE_INTEGER);
    await store.compareAndSet({ mesh: MESH, kind: 'spot', id: 'b' }, 'absent', authority({ owner: RUN_B }));
    expect(await resolver.resolve('spot', 'b')).toMatchObject({ tag: 'ReadyRoute', owner: RUN_B });
  });

  it('a failed read is StoreFailure with the error kept, an unreadable record too; it never rejects for them', async () => {
    const down = new Error('connection refused');
    const unreadable = new ZLinkError('ProtocolError', 'cannot be read');
    for (const error of [down, unreadable]) {
      const store = { get: () => Promise.reject(error) } as unknown as AuthorityStore;
      const resolver = new AuthorityResolver({
        mesh: MESH,
        store,
        leases: new FakeLeases(),
        clock: new FakeClock(),
      });
      expect(await resolver.resolve('spot', 'room-1')).toEqual({
        tag: 'StoreFailure',
        key: { mesh: MESH, kind: 'spot', id: 'room-1' },
        error,
      });
    }
  });

  it('a bad kind or id rejects InvalidArgument without reading', async () => {
    let reads = 0;
    const store = { get: () => (reads++, Promise.resolve(undefined)) } as unknown as AuthorityStore;
    const resolver = new AuthorityResolver({
      mesh: MESH,
      store,
      leases: new FakeLeases(),
      clock: new FakeClock(),
    });
    await expect(resolver.resolve('spot', '')).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(resolver.resolve('room' as 'spot', 'x')).rejects.toMatchObject({ code: 'InvalidArgument' });
    expect(reads).toBe(0);
  });
});
