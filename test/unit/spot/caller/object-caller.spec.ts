import { describe, expect, it } from '@jest/globals';
import {
  type AuthorityStore,
  type NodeRun,
  type ObjectTypeMetrics,
  PendingRequests,
  StoreHealth,
  ZLinkError,
  ZLinkEvents,
  encodePayload,
} from '../../../../lib/core/index.js';
import { decodeObjectRecord } from '../../../../lib/spot/wire/index.js';
import { ObjectCaller } from '../../../../lib/spot/caller/object-caller.js';
import type { ObjectSubmission } from '../../../../lib/spot/caller/object-submission.js';
import { AuthorityResolver, CachedResolver, RouteCache } from '../../../../lib/spot/resolve/index.js';
import { SYSTEM_CLOCK } from '../../../../lib/spot/index.js';
import { MemoryLocationStore } from '../../../../lib/store/memory/memory-location-store.js';
import { FakeLeases, FakeLink, MESH, RUN_A, RUN_B, authority } from '../fixtures.js';

/**
 * Resolving a global id on the caller (docs/protocol.md#resolving-a-global-id): a route whose owner is not a ready peer yet waits for its
 * link (bounded); a caller that gives up meanwhile ends `Cancelled` and keeps the route, only a wait
 * that ran out drops it. Each call counts once in the per-type counters, however it got there.
 */

type GetOrCreate = ConstructorParameters<typeof ObjectCaller>[0]['getOrCreate'];

async function setup(
  getOrCreate?: (store: AuthorityStore) => GetOrCreate,
  readsOf: (store: AuthorityStore) => AuthorityStore = (store) => store,
) {
  const store = new MemoryLocationStore().authorityStore();
  await store.compareAndSet({ mesh: MESH, kind: 'spot', id: 'x' }, 'absent', authority({ owner: RUN_B }));
  const leases = new FakeLeases();
  leases.set(RUN_B, Date.now() + 60_000);
  const cache = new RouteCache({ maxAgeMs: 60_000, clock: SYSTEM_CLOCK, leases });
  const events = new ZLinkEvents();
  const link = new FakeLink();
  const self: NodeRun = RUN_A;
  const caller = new ObjectCaller({
    mesh: MESH,
    self,
    link,
    resolver: new CachedResolver(
      new AuthorityResolver({ mesh: MESH, store: readsOf(store), leases, clock: SYSTEM_CLOCK }),
      cache,
    ),
    cache,
    host: undefined,
    pending: new PendingRequests(),
    events,
    clock: SYSTEM_CLOCK,
    storeHealth: new StoreHealth(events),
    getOrCreate: getOrCreate?.(store) ?? (() => Promise.reject(new Error('not in this test'))),
  });
  const metrics = (): ObjectTypeMetrics => events.metrics.objects.of('spot', 'room');
  return { caller, cache, link, metrics, events, store };
}

function send(signal?: AbortSignal, timeoutMs = 5000, id = 'x'): ObjectSubmission {
  return {
    messageKind: 'send',
    objectKind: 'spot',
    id,
    packet: 'chat',
    metadata: undefined,
    payload: encodePayload('hi'),
    trace: undefined,
    timeoutMs,
    signal,
  };
}

describe('ObjectCaller: an owner that is not a ready peer yet', () => {
  it('a call cancelled while it waits for the link ends Cancelled and keeps the route', async () => {
    const { caller, cache, link, metrics } = await setup();
    const abort = new AbortController();
    const call = caller.call(send(abort.signal));
    await new Promise((r) => setTimeout(r, 20));
    expect(cache.size).toBe(1);
    abort.abort();
    await expect(call).rejects.toMatchObject({ code: 'Cancelled' });
    expect(cache.size).toBe(1);
    expect(link.sent).toHaveLength(0);
    expect(metrics().calls.failures.get('Cancelled')).toBe(1);
    expect(metrics().calls.failures.get('Unavailable')).toBeUndefined();
  });

  it('a signal already aborted when the route is known does not wait at all', async () => {
    const { caller, cache } = await setup();
    const abort = new AbortController();
    // Aborted after the call started (during the store read), before it reached the owner's link.
    const call = caller.call(send(abort.signal, 60_000));
    abort.abort();
    const started = Date.now();
    await expect(call).rejects.toMatchObject({ code: 'Cancelled' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(cache.size).toBe(1);
  });

  it('a wait that runs out ends Unavailable and drops the route', async () => {
    const { caller, cache, metrics } = await setup();
    await expect(caller.call(send(undefined, 100))).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'ownerUnreachable' },
    });
    expect(cache.size).toBe(0);
    expect(metrics().calls.failures.get('Unavailable')).toBe(1);
  });

  it('a call whose owner becomes ready during the wait is sent, and counted once', async () => {
    const { caller, link, metrics } = await setup();
    const call = caller.call(send());
    await new Promise((r) => setTimeout(r, 20));
    link.up();
    await call;
    expect(link.sent).toHaveLength(1);
    expect(metrics().calls.sends).toBe(1);
  });

  it('closing the waits unsubscribes from the link', async () => {
    const { caller, link } = await setup();
    expect(link.subscribers).toBe(1);
    caller.waits.close();
    expect(link.subscribers).toBe(0);
  });
});

describe('ObjectCaller: Instance intent and the per-type counters', () => {
  const creating: (store: AuthorityStore) => GetOrCreate = (store) => async (kind, type, id) => {
    if (type !== 'room') throw new ZLinkError('NotFound', `no server hosts ${kind} type '${type}'`);
    await store.compareAndSet({ mesh: MESH, kind, id }, 'absent', authority({ owner: RUN_B }));
    return undefined;
  };

  it('a type no server hosts, named by Instance intent, gets no counters', async () => {
    const { caller, events } = await setup(creating);
    for (let i = 0; i < 3; i++)
      await expect(
        caller.call({ ...send(undefined, 5000, `y${i}`), instance: { type: `made-up-${i}`, init: null } }),
      ).rejects.toMatchObject({ code: 'NotFound' });
    expect(events.metrics.objects.snapshot().map((m) => m.type)).toEqual([]);
  });

  it('the read that found it Missing counts under the type once it was created, and the one after', async () => {
    const { caller, link, metrics } = await setup(creating);
    link.ready = true;
    await caller.call({ ...send(undefined, 5000, 'y'), instance: { type: 'room', init: null } });
    expect(metrics()).toMatchObject({ storeReads: 2, calls: { sends: 1 } });
  });
});

describe('ObjectCaller: a read that crosses its owner leaving', () => {
  /** A store whose next read answers what it held when asked, but only once `release()` is called. */
  async function heldRead(leaving: boolean) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reads = 0;
    const held = (inner: AuthorityStore): AuthorityStore =>
      Object.assign(Object.create(inner) as AuthorityStore, {
        get: async (key: Parameters<AuthorityStore['get']>[0]) => {
          const answer = await inner.get(key);
          if (reads++ === 0) await gate;
          return answer;
        },
      });
    const { caller, cache, link, store: inner } = await setup(undefined, held);
    link.up();
    const get = (key: Parameters<AuthorityStore['get']>[0]) => inner.get(key);
    const call = caller.call(send());
    await new Promise((r) => setTimeout(r, 10));
    // Meanwhile the owner moved the object on (here: a newer authority) and said it is leaving.
    const key = { mesh: MESH, kind: 'spot' as const, id: 'x' };
    const stored = await get(key);
    await inner.compareAndSet(key, stored!.version, authority({ owner: RUN_B, authorityOwnerGeneration: 2 }));
    if (leaving) cache.ownerRunEnded(RUN_B, 'ownerLeaving');
    release();
    await call;
    const sent = decodeObjectRecord(link.sent[0] as Uint8Array) as {
      fences: { authorityOwnerGeneration: number };
    };
    return { reads, aog: sent.fences.authorityOwnerGeneration };
  }

  it('is read again before anything is sent, and the call goes on the route read after the notice', async () => {
    expect(await heldRead(true)).toEqual({ reads: 2, aog: 2 });
  });

  it('without the notice, the route read is the one used (one read)', async () => {
    expect(await heldRead(false)).toEqual({ reads: 1, aog: 1 });
  });
});
