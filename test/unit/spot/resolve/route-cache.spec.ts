import { describe, expect, it } from '@jest/globals';
import type { ObjectKind } from '../../../../lib/core/index.js';
import {
  type ReadyRoute,
  RouteCache,
  type RouteCacheOptions,
  type RouteDropReason,
} from '../../../../lib/spot/resolve/index.js';
import { type ResolveResult } from '../../../../lib/spot/index.js';
import { FakeClock, FakeLeases, MESH, RUN_A, RUN_B, authority, route } from '../fixtures.js';

/**
 * The positive route cache (docs/protocol.md#the-route-cache): only Ready routes; an entry lives until the
 * earlier of its max age and the owner lease's admission deadline; 0 = off; a max-age change applies
 * to new entries only; an entry goes at once on a larger StoreVersion, a stale-route answer naming
 * its fences (never a newer entry), a store recovery, or its owner run ending — each with a reason.
 */

function setup(options: Partial<RouteCacheOptions> = {}) {
  const clock = new FakeClock();
  const leases = new FakeLeases();
  const dropped: [string, RouteDropReason][] = [];
  const cache = new RouteCache({
    maxAgeMs: 15000,
    clock,
    leases,
    onDrop: (r, reason) => dropped.push([r.key.id, reason]),
    ...options,
  });
  /** A miss that read `result`, as the cached resolver presents it. */
  const offer = (result: ResolveResult, kind: ObjectKind = result.key.kind, id = result.key.id) =>
    cache.close(cache.open(kind, id), result);
  return { clock, leases, cache, dropped, offer };
}

describe('RouteCache', () => {
  it('keeps a ReadyRoute and hands back the same object on a hit, without asking the lease view', () => {
    const { cache, offer, leases } = setup();
    const r = route('room-1');
    expect(offer(r)).toBe(true);
    expect(cache.lookup('spot', 'room-1')).toBe(r);
    expect(cache.lookup('spot', 'room-1')).toBe(r);
    expect(cache.lookup('actor', 'room-1')).toBeUndefined();
    expect(leases.asked).toBe(0);
  });

  it('never keeps Missing, Creating, Unavailable or StoreFailure, nor a failed read', () => {
    const { cache, offer } = setup();
    const key = { mesh: MESH, kind: 'spot', id: 'x' } as const;
    const stored = { key, record: authority({}, 'creating'), version: 3, writtenAt: 0, readAt: 0 };
    const results: ResolveResult[] = [
      { tag: 'Missing', key },
      { tag: 'Unavailable', key, reason: 'creating', authority: stored },
      { tag: 'Unavailable', key, reason: 'releasing', authority: stored },
      { tag: 'Unavailable', key, reason: 'ownerLeaseGone', authority: stored },
      { tag: 'StoreFailure', key, error: new Error('down') },
    ];
    for (const result of results) expect(offer(result)).toBe(false);
    expect(cache.close(cache.open('spot', 'x'), undefined)).toBe(false);
    expect(cache.size).toBe(0);
    expect(cache.lookup('spot', 'x')).toBeUndefined();
  });

  it('an entry ends at its max age (expired)', () => {
    const { cache, offer, clock, dropped } = setup();
    offer(route('a'));
    clock.advance(14999);
    expect(cache.lookup('spot', 'a')).toBeDefined();
    clock.advance(1);
    expect(cache.lookup('spot', 'a')).toBeUndefined();
    expect(dropped).toEqual([['a', 'expired']]);
    expect(cache.size).toBe(0);
  });

  it('an entry ends at the admission deadline when the lease was not refreshed (leaseEnded)', () => {
    const { cache, offer, clock, dropped, leases } = setup();
    const deadline = clock.t + 4000;
    leases.set(RUN_A, deadline);
    offer(route('a', { admissionDeadline: deadline }));
    clock.advance(3999);
    expect(cache.lookup('spot', 'a')).toBeDefined();
    clock.advance(1);
    expect(cache.lookup('spot', 'a')).toBeUndefined();
    expect(dropped).toEqual([['a', 'leaseEnded']]);
  });

  it('a refreshed lease carries the entry on, in a copy with the later deadline, but never past max age', () => {
    const { cache, offer, clock, dropped, leases } = setup();
    const start = clock.t;
    const first = route('a', { admissionDeadline: start + 4000 });
    offer(first);
    leases.set(RUN_A, start + 13000);
    clock.advance(4000);
    const later = cache.lookup('spot', 'a');
    expect(later).toEqual({ ...first, admissionDeadline: start + 13000 });
    expect(first.admissionDeadline).toBe(start + 4000);
    leases.set(RUN_A, start + 99000);
    clock.t = start + 14999;
    expect(cache.lookup('spot', 'a')?.admissionDeadline).toBe(start + 99000);
    clock.t = start + 15000;
    expect(cache.lookup('spot', 'a')).toBeUndefined();
    expect(dropped).toEqual([['a', 'expired']]);
  });

  it('a route past its admission deadline is not cached at all', () => {
    const { cache, offer, clock } = setup();
    expect(offer(route('a', { admissionDeadline: clock.t }))).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('max age 0 caches nothing', () => {
    const { cache, offer } = setup({ maxAgeMs: 0 });
    expect(offer(route('a'))).toBe(false);
    expect(cache.lookup('spot', 'a')).toBeUndefined();
  });

  it('a change of max age applies to new entries only: neither shortens nor extends an existing one', () => {
    const { cache, offer, clock } = setup();
    offer(route('old'));
    cache.setMaxAgeMs(1000);
    offer(route('new'));
    clock.advance(1000);
    expect(cache.lookup('spot', 'new')).toBeUndefined();
    expect(cache.lookup('spot', 'old')).toBeDefined();
    cache.setMaxAgeMs(60000);
    clock.advance(14000);
    expect(cache.lookup('spot', 'old')).toBeUndefined();
    // Turned off: what is cached lives out its own lifetime, nothing new is kept.
    offer(route('kept'));
    cache.setMaxAgeMs(0);
    expect(offer(route('refused'))).toBe(false);
    expect(cache.lookup('spot', 'kept')).toBeDefined();
    expect(() => cache.setMaxAgeMs(-1)).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
  });

  it('a larger StoreVersion seen drops the entry at once (newerVersion); the same or a smaller one does not', () => {
    const { cache, offer, dropped } = setup();
    offer(route('a', { storeVersion: 5 }));
    cache.observeVersion('spot', 'a', 5);
    cache.observeVersion('spot', 'a', 4);
    cache.observeVersion('actor', 'a', 9);
    expect(cache.lookup('spot', 'a')).toBeDefined();
    cache.observeVersion('spot', 'a', 6);
    expect(cache.lookup('spot', 'a')).toBeUndefined();
    expect(dropped).toEqual([['a', 'newerVersion']]);
  });

  it('an Unavailable read with a larger StoreVersion drops an older entry', () => {
    const { offer, dropped } = setup();
    offer(route('a', { storeVersion: 5 }));
    const key = { mesh: MESH, kind: 'spot', id: 'a' } as const;
    const stored = { key, record: authority({}, 'releasing'), version: 6, writtenAt: 0, readAt: 0 };
    expect(offer({ tag: 'Unavailable', key, reason: 'releasing', authority: stored })).toBe(false);
    expect(dropped).toEqual([['a', 'newerVersion']]);
  });

  it('a read that ends after a newer one never replaces the newer entry; a newer read replaces an older entry', () => {
    const { cache, offer, dropped } = setup();
    offer(route('a', { storeVersion: 7 }));
    expect(offer(route('a', { storeVersion: 6 }))).toBe(false);
    expect(cache.lookup('spot', 'a')?.storeVersion).toBe(7);
    expect(offer(route('a', { storeVersion: 8 }))).toBe(true);
    expect(cache.lookup('spot', 'a')?.storeVersion).toBe(8);
    expect(dropped).toEqual([['a', 'newerVersion']]);
  });

  it('a miss in flight when a larger StoreVersion is seen does not cache its older result', () => {
    const { cache } = setup();
    const ticket = cache.open('spot', 'a');
    cache.observeVersion('spot', 'a', 9);
    expect(cache.close(ticket, route('a', { storeVersion: 8 }))).toBe(false);
    const next = cache.open('spot', 'a');
    expect(cache.close(next, route('a', { storeVersion: 8 }))).toBe(true);
  });

  it('a stale-route answer naming the entry fences drops it (staleRoute)', () => {
    const { cache, offer, dropped } = setup();
    const r = route('a', { storeVersion: 3 });
    offer(r);
    expect(cache.invalidateStale('spot', 'a', r)).toBe(true);
    expect(cache.lookup('spot', 'a')).toBeUndefined();
    expect(dropped).toEqual([['a', 'staleRoute']]);
    // A notice naming fences without a StoreVersion (a relay notice) matches on the fences alone.
    offer(route('b'));
    const { storeVersion: _dropped, ...fences } = route('b');
    expect(cache.invalidateStale('spot', 'b', fences)).toBe(true);
  });

  it.each<[string, Partial<ReadyRoute>]>([
    ['StoreVersion', { storeVersion: 2 }],
    ['AuthorityOwnerGeneration', { authorityOwnerGeneration: 1 }],
    ['owner run', { owner: RUN_B }],
    ['node generation', { owner: { rid: RUN_A.rid, nodeGeneration: 'ga0' } }],
    ['OwnerLeaseGeneration', { ownerLeaseGeneration: 1 }],
    ['ObjectGeneration', { objectGeneration: 1 }],
  ])('a stale-route answer with an older %s does not drop the newer entry', (_name, older) => {
    const { cache, offer, dropped } = setup();
    const newer = route('a', {
      storeVersion: 3,
      authorityOwnerGeneration: 2,
      ownerLeaseGeneration: 2,
      objectGeneration: 2,
    });
    offer(newer);
    const stale = { ...newer, authorityOwnerGeneration: 2, ...older };
    expect(cache.invalidateStale('spot', 'a', stale)).toBe(false);
    expect(cache.lookup('spot', 'a')).toBe(newer);
    expect(dropped).toEqual([]);
  });

  it('a stale-route answer spoils a miss in flight: the route it read is not cached', () => {
    const { cache } = setup();
    const r = route('a');
    const ticket = cache.open('spot', 'a');
    expect(ticket.spoiled).toBe(false);
    cache.invalidateStale('spot', 'a', r);
    expect(ticket.spoiled).toBe(true);
    expect(cache.close(ticket, r)).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('a store recovery drops every entry (storeRecovered) and spoils misses in flight', () => {
    const { cache, offer, dropped } = setup();
    offer(route('a'));
    offer(route('b', { owner: RUN_B }));
    offer(route('p', {}, 'actor'));
    const ticket = cache.open('actor', 'q');
    cache.storeRecovered();
    expect(cache.size).toBe(0);
    expect(dropped.map(([, reason]) => reason)).toEqual([
      'storeRecovered',
      'storeRecovered',
      'storeRecovered',
    ]);
    expect(dropped.map(([id]) => id).sort()).toEqual(['a', 'b', 'p']);
    expect(cache.close(ticket, route('q', {}, 'actor'))).toBe(false);
    expect(offer(route('a'))).toBe(true);
  });

  it('an owner run ending drops every entry of that run only (ownerRunEnded)', () => {
    const { cache, offer, dropped } = setup();
    const nextRun = { rid: RUN_A.rid, nodeGeneration: 'ga2' };
    offer(route('a1'));
    offer(route('a2', {}, 'actor'));
    offer(route('b', { owner: RUN_B }));
    offer(route('a-next', { owner: nextRun }));
    cache.ownerRunEnded(RUN_A);
    expect(dropped.sort()).toEqual([
      ['a1', 'ownerRunEnded'],
      ['a2', 'ownerRunEnded'],
    ]);
    expect(cache.lookup('spot', 'b')).toBeDefined();
    expect(cache.lookup('spot', 'a-next')).toBeDefined();
    expect(cache.size).toBe(2);
    cache.ownerRunEnded(RUN_A);
    expect(dropped).toHaveLength(2);
  });

  it('is bounded: past maxEntries the least recently used entry goes (evicted)', () => {
    const { cache, offer, dropped } = setup({ maxEntries: 2 });
    offer(route('a'));
    offer(route('b'));
    cache.lookup('spot', 'a');
    offer(route('c'));
    expect(dropped).toEqual([['b', 'evicted']]);
    expect(cache.size).toBe(2);
    expect(cache.lookup('spot', 'a')).toBeDefined();
    expect(cache.lookup('spot', 'c')).toBeDefined();
    offer(route('d'));
    expect(dropped).toEqual([
      ['b', 'evicted'],
      ['a', 'evicted'],
    ]);
  });

  it('a listener that throws loses nothing: the entry is gone and the cache goes on', () => {
    const { cache } = setup({
      onDrop: () => {
        throw new Error('listener');
      },
    });
    cache.close(cache.open('spot', 'a'), route('a'));
    expect(() => cache.storeRecovered()).not.toThrow();
    expect(cache.size).toBe(0);
  });
});
