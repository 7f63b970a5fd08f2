import { afterEach, describe, expect, it } from '@jest/globals';
import { type AuthorityStore, type NodeRun, ZLinkEvents } from '../../../../lib/core/index.js';
import { SYSTEM_CLOCK } from '../../../../lib/spot/index.js';
import type { ObjectHost } from '../../../../lib/spot/owner/object-host.js';
import { FollowRoutes } from '../../../../lib/spot/relocation/follow-routes.js';
import { OutgoingMove } from '../../../../lib/spot/relocation/outgoing-move.js';
import { MemoryLocationStore } from '../../../../lib/store/memory/memory-location-store.js';
import { objectClass, registry } from '../../../integration/spot/harness.js';
import { inboundRequest, objectHost } from '../fixtures.js';

/**
 * The source of a move after its go, when the target's commit does not come the plain way: it settles
 * by the store, never runs an object another node holds, and keeps the version it last wrote.
 */

const SELF: NodeRun = { rid: 'node-a', nodeGeneration: 'ga1' };
const TARGET = { rid: 'node-b', generation: 'gb1' };
let runs = 0;

class Counter {
  n = 0;
  bump(): number {
    runs++;
    return ++this.n;
  }
  capture(): unknown {
    return { n: this.n };
  }
}

const hosts: ObjectHost[] = [];
afterEach(async () => {
  runs = 0;
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

async function moving(store: AuthorityStore, fenced: () => boolean = () => false) {
  const cls = { ...objectClass('spot', 'counter', Counter, ['bump']), options: { relocatable: true } };
  const host = objectHost(SELF, registry(cls), { store, leaseFenced: fenced });
  hosts.push(host);
  await host.activate('spot', 'counter', 'x', 'create', undefined, 5000);
  const a = host.get('spot', 'x');
  if (!a) throw new Error('not activated');
  const link = { answer: () => true, isReady: () => true } as never;
  const move = new OutgoingMove(
    {
      mesh: 'objects',
      self: SELF,
      link,
      host,
      store,
      relocationStore: undefined,
      followRoutes: new FollowRoutes(SYSTEM_CLOCK, 30_000),
      events: new ZLinkEvents(),
      clock: SYSTEM_CLOCK,
      leaseGeneration: () => 1,
      movedAway: () => undefined,
      relayed: () => undefined,
    },
    'ga1:1',
    a,
    TARGET,
    5000,
  );
  await move.start();
  const answered: string[] = [];
  const call = inboundRequest('x', { owner: SELF, ...a.authority }, 'bump');
  host.dispatch(call, { ok: (v) => answered.push(`ok ${String(v)}`), error: (e) => answered.push(e.code) });
  move.ready({ relocationId: 'ga1:1', refusal: undefined } as never);
  return { host, a, move, answered };
}

describe('a move settled after its go', () => {
  it('a record of another run under the target rid is not the target: the move ends, the object goes', async () => {
    const store = new MemoryLocationStore().authorityStore();
    const { host, a, move } = await moving(store);
    // node-b restarted (a new run) and the id was created there afresh meanwhile.
    const stored = await store.get(a.key);
    if (!stored) throw new Error('no record');
    await store.compareAndSet(a.key, stored.version, {
      ...stored.record,
      owner: { rid: 'node-b', nodeGeneration: 'gb2' },
      objectGeneration: 99,
      authorityOwnerGeneration: 1,
    });
    move.targetLost();
    expect(await move.done).toMatchObject({ outcome: 'aborted' });
    expect(host.get('spot', 'x')).toBeUndefined();
    expect(runs).toBe(0);
  });

  it("the source's own fencing write is kept even when the target's refusal comes first", async () => {
    const real = new MemoryLocationStore().authorityStore();
    let gate: Promise<void> = Promise.resolve();
    let open: () => void = () => undefined;
    const store = Object.create(real) as AuthorityStore;
    store.compareAndSet = async (...args: Parameters<AuthorityStore['compareAndSet']>) => {
      const r = await real.compareAndSet(...args);
      await gate;
      return r;
    };
    const { a, move } = await moving(store);
    gate = new Promise((r) => (open = r));
    move.targetLost(); // its own CAS lands, its answer waits at the gate
    await new Promise((r) => setTimeout(r, 50));
    move.committed({
      relocationId: 'ga1:1',
      refusal: { code: 'Unavailable', message: 'the authority changed' },
    } as never);
    open();
    expect((await move.done).outcome).toBe('aborted');
    await new Promise((r) => setTimeout(r, 20));
    expect((await real.get(a.key))?.version).toBe(a.authority.storeVersion);
  });

  it('after a fence and a takeover elsewhere, a refused move does not run the object here', async () => {
    const store = new MemoryLocationStore().authorityStore();
    let fenced = false;
    const { host, a, move } = await moving(store, () => fenced);
    fenced = true;
    const stored = await store.get(a.key);
    if (!stored) throw new Error('no record');
    await store.compareAndSet(a.key, stored.version, {
      ...stored.record,
      owner: { rid: 'node-x', nodeGeneration: 'gx' },
      objectGeneration: 50,
    });
    fenced = false;
    await host.leaseRegained(); // leaves the moving object to its move
    move.committed({
      relocationId: 'ga1:1',
      refusal: { code: 'Unavailable', message: 'the authority changed during the move' },
    } as never);
    expect(await move.done).toMatchObject({ outcome: 'aborted' });
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(0);
    expect(host.get('spot', 'x')).toBeUndefined();
  });
});
