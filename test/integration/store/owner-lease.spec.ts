/**
 * The owner lease (issue 5 item 3, docs/protocol.md#owner-lease-and-fencing): descriptors are written and kept alive; when no refresh
 * succeeds by the fencing deadline the owner is fenced, and a later refresh lifts it — with a store
 * that stops answering, and with a real Redis paused by `CLIENT PAUSE`.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type LeaseTiming,
  type LocationDescriptor,
  type LocationStore,
  OwnerLease,
  ZLinkEvents,
} from '../../../lib/core/index.js';
import { MemoryLocationStore } from '../../../lib/store/index.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { Cleanup, EventCollector } from '../../helpers/index.js';
import { serverDescriptor, useRedis } from './fixtures.js';

const timing: LeaseTiming = { ttlMs: 1000, refreshMs: 200, refreshTimeoutMs: 150, marginMs: 200 };
const descriptor = serverDescriptor();

/** A memory store whose refreshes can be made to hang, as a store that stopped answering. */
class StallingStore extends MemoryLocationStore {
  stalled = false;
  override refresh(descriptors: readonly LocationDescriptor[], leaseMs: number): Promise<boolean> {
    return this.stalled ? new Promise<boolean>(() => undefined) : super.refresh(descriptors, leaseMs);
  }
}

const redisServer = useRedis();

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

async function leased(store: LocationStore) {
  const events = new ZLinkEvents();
  const collector = cleanup.add(new EventCollector(events));
  const lease = new OwnerLease(store, timing, events);
  cleanup.add({ close: () => lease.stop() });
  await lease.start([descriptor]);
  return { lease, collector };
}

describe('OwnerLease', () => {
  it('keeps its descriptors alive past the ttl, and removes them on stop', async () => {
    const store = cleanup.add(new MemoryLocationStore());
    const { lease } = await leased(store);
    await new Promise((r) => setTimeout(r, timing.ttlMs * 2));
    expect(await store.list('server', 'billing')).toEqual([descriptor]);
    expect(lease.isFenced).toBe(false);
    const updated = { ...descriptor, weight: 0, revision: 2 };
    await lease.update(updated);
    expect(await store.list('server', 'billing')).toEqual([updated]);
    await lease.stop();
    expect(await store.list('server', 'billing')).toEqual([]);
  });

  it('a store that stops answering fences the owner by ttl - margin after the last good refresh; answering again lifts it', async () => {
    const store = cleanup.add(new StallingStore());
    const { lease, collector } = await leased(store);
    store.stalled = true;
    const stalledAt = Date.now();
    await collector.next('lease', (e) => e.state === 'fenced', 3000);
    // The last good refresh started at most one interval before the stall.
    expect(Date.now() - stalledAt).toBeLessThanOrEqual(timing.ttlMs - timing.marginMs + 300);
    expect(lease.isFenced).toBe(true);
    store.stalled = false;
    await collector.next('lease', (e) => e.state === 'held', 3000);
    expect(lease.isFenced).toBe(false);
  });

  it('a real Redis paused with CLIENT PAUSE fences the owner; after the pause the lease is held again and the descriptor is there', async () => {
    const store = cleanup.add(
      new RedisLocationStore({ redis: redisServer.current.url, keyPrefix: 'lease-test' }),
    );
    const { lease, collector } = await leased(store);
    await redisServer.current.pauseClients(1500);
    await collector.next('lease', (e) => e.state === 'fenced', 3000);
    await collector.next('lease', (e) => e.state === 'held', 5000);
    expect(lease.isFenced).toBe(false);
    expect(await store.list('server', 'billing')).toEqual([descriptor]);
  });
});
