import { describe, expect, it } from '@jest/globals';
import { type AuthorityStore, type MeshNodeDescriptor, type NodeRun } from '../../../../lib/core/index.js';
import { type ObjectRouteFences } from '../../../../lib/spot/wire/index.js';
import type { InboundObjectCall, ObjectAnswer } from '../../../../lib/spot/owner/object-call.js';
import { MemoryLocationStore } from '../../../../lib/store/memory/memory-location-store.js';
import { objectClass, registry } from '../../../integration/spot/harness.js';
import { FakeLeases, MESH, inboundRequest, objectHost } from '../fixtures.js';

/** Fencing on the owner (docs/protocol.md#owner-lease-and-fencing): after a fence, admission opens only once the latest re-check has read every object. */

const SELF: NodeRun = { rid: 'node-a', nodeGeneration: 'ga1' };

class Room {
  ping(): string {
    return 'pong';
  }
}

/** An Authority Store whose reads wait, while `held`, until the test lets each one go (in order). */
interface SlowReads {
  held: boolean;
  readonly store: AuthorityStore;
  next(): void;
  waiting(): number;
}

function slowReads(inner: AuthorityStore): SlowReads {
  const queue: (() => void)[] = [];
  const view: SlowReads = {
    held: false,
    store: {
      get: async (key) => {
        if (view.held) await new Promise<void>((r) => queue.push(r));
        return inner.get(key);
      },
      compareAndSet: (key, expected, next) => inner.compareAndSet(key, expected, next),
      delete: (key, expected) => inner.delete(key, expected),
      takeOver: (key, expected, next, previous) => inner.takeOver(key, expected, next, previous),
      listByOwner: (mesh, rid) => inner.listByOwner(mesh, rid),
      close: () => inner.close(),
    },
    next: () => queue.shift()?.(),
    waiting: () => queue.length,
  };
  return view;
}

async function until(probe: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !probe(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(probe()).toBe(true);
}

describe('ObjectHost.leaseRegained', () => {
  it('a pass overtaken by a newer fence does not open admission; the newer pass does', async () => {
    const reads = slowReads(new MemoryLocationStore().authorityStore());
    let leaseFenced = false;
    const host = objectHost(SELF, registry(objectClass('spot', 'room', Room, ['ping'])), {
      store: reads.store,
      leaseFenced: () => leaseFenced,
    });
    await host.activate('spot', 'room', 'x', 'create', undefined, 5000);
    reads.held = true;

    // Fenced, back: the first pass reads x (slowly).
    leaseFenced = true;
    leaseFenced = false;
    const first = host.leaseRegained();
    await until(() => reads.waiting() === 1);
    // Fenced and back again while that read is out: a second pass starts.
    leaseFenced = true;
    leaseFenced = false;
    const second = host.leaseRegained();
    await until(() => reads.waiting() === 2);

    reads.next(); // the first pass's read answers: that pass is stale and must leave admission shut
    await first;
    expect(host.fenced).toBe(true);
    reads.next();
    await second;
    expect(host.fenced).toBe(false);
    expect(host.get('spot', 'x')?.state).toBe('ready');
    await host.close();
  });
});

/** A request to Spot `id` on route `fences`, and where its one terminal goes. */
function callOn(
  id: string,
  fences: ObjectRouteFences,
  answered: string[],
): [InboundObjectCall, ObjectAnswer] {
  return [
    inboundRequest(id, fences, 'ping', `op-${answered.length}`),
    { ok: (v) => answered.push(`ok ${String(v)}`), error: (e) => answered.push(e.code) },
  ];
}

describe('ObjectHost.dispatch while a creation commits', () => {
  // The store answers the Ready write and other processes' reads at once: a caller that read the
  // fresh record may reach the owner before the write's answer does (the demo's rooms did, under load).
  it("admits a call on the committed record's route before the commit's answer is in", async () => {
    const inner = new MemoryLocationStore().authorityStore();
    let release: (() => void) | undefined;
    const store: AuthorityStore = {
      ...inner,
      get: (key) => inner.get(key),
      compareAndSet: async (key, expected, next) => {
        const cas = await inner.compareAndSet(key, expected, next);
        // The write has landed; its answer is held until the test lets it go.
        if (next.state === 'ready') await new Promise<void>((r) => (release = r));
        return cas;
      },
      delete: (key, expected) => inner.delete(key, expected),
      takeOver: (key, expected, next, previous) => inner.takeOver(key, expected, next, previous),
      listByOwner: (mesh, rid) => inner.listByOwner(mesh, rid),
      close: () => inner.close(),
    };
    const host = objectHost(SELF, registry(objectClass('spot', 'room', Room, ['ping'])), { store });
    const created = host.activate('spot', 'room', 'x', 'create', undefined, 5000);
    await until(() => release !== undefined);
    const stored = await inner.get({ mesh: host.get('spot', 'x')!.key.mesh, kind: 'spot', id: 'x' });
    expect(stored?.record.state).toBe('ready');
    expect(host.get('spot', 'x')?.state).toBe('creating');
    const route: ObjectRouteFences = {
      owner: SELF,
      objectGeneration: stored!.record.objectGeneration,
      authorityOwnerGeneration: stored!.record.authorityOwnerGeneration,
      ownerLeaseGeneration: stored!.record.ownerLeaseGeneration,
    };
    const answered: string[] = [];
    host.dispatch(...callOn('x', route, answered));
    // Another incarnation's route is no proof the write landed: refused as before.
    host.dispatch(...callOn('x', { ...route, objectGeneration: route.objectGeneration + 1 }, answered));
    await until(() => answered.length === 2);
    expect(answered.sort()).toEqual(['ObjectStale', 'ok pong']);
    release?.();
    await created;
    expect(host.get('spot', 'x')?.state).toBe('ready');
    await host.close();
  });
});

describe('ObjectHost get-or-create and an owner this node cannot confirm live', () => {
  const OWNER: NodeRun = { rid: 'node-b', nodeGeneration: 'gb1' };
  const ownerDescriptor: MeshNodeDescriptor = {
    kind: 'mesh-node',
    mesh: MESH,
    rid: OWNER.rid,
    generation: OWNER.nodeGeneration,
    endpoint: 'tcp://127.0.0.1:1',
    objectRole: 'server',
    memberships: [],
    revision: 1,
  };

  /** node-b's Spot 'x' Ready in a store that holds node-b's lease; node-a's view calls node-b live. */
  async function setup(linkReady: boolean) {
    const location = new MemoryLocationStore();
    await location.put(ownerDescriptor, 60_000);
    const store = location.authorityStore();
    const classes = registry(objectClass('spot', 'room', Room, ['ping']));
    const owner = objectHost(OWNER, classes, { store });
    const ref = await owner.activate('spot', 'room', 'x', 'create', undefined, 5000);
    const leases = new FakeLeases();
    leases.set(OWNER, Date.now() + 60_000);
    const host = objectHost(SELF, classes, { store, leases, link: { isReady: () => linkReady } });
    return { location, ref, host, owner };
  }

  it('its link down but its lease held in the store: the store says it lives, the answer is its ref', async () => {
    const { ref, host, owner } = await setup(false);
    await expect(host.activate('spot', 'room', 'x', 'getOrCreate', undefined, 2000)).resolves.toEqual(ref);
    expect(host.get('spot', 'x')).toBeUndefined();
    await Promise.all([host.close(), owner.close()]);
  });

  it("its link down and its lease gone from the store (this node's view not read since): taken over here", async () => {
    const { location, ref, host, owner } = await setup(false);
    await location.remove(ownerDescriptor);
    const taken = await host.activate('spot', 'room', 'x', 'getOrCreate', undefined, 2000);
    expect(taken).toMatchObject({ id: 'x', rid: SELF.rid });
    expect(taken.objectGeneration).toBeGreaterThan(ref.objectGeneration);
    expect(host.get('spot', 'x')?.state).toBe('ready');
    await Promise.all([host.close(), owner.close()]);
  });

  it('its link ready and its lease live in the view: confirmed without a store write, its ref', async () => {
    const { location, ref, host, owner } = await setup(true);
    // Even with the store's lease gone: a ready link and a live view are this node's confirmation
    // (a killed owner's link goes at once; a silent one's within its silence bound).
    await location.remove(ownerDescriptor);
    await expect(host.activate('spot', 'room', 'x', 'getOrCreate', undefined, 2000)).resolves.toEqual(ref);
    await Promise.all([host.close(), owner.close()]);
  });
});
