import { afterEach, describe, expect, it } from '@jest/globals';
import {
  MemoryLocationStore,
  MemoryRelocationStore,
  type ObjectClassDescription,
  type ZLinkEvent,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
  type ZLinkRuntime,
} from '../../../lib/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from './harness.js';

/**
 * Moving a live Spot between two object servers of one process pair (real sockets, the memory store):
 * its state, waiting calls and labelled timers go with it, calls made during the move are answered
 * once each, in the order each sender sent them, and a failed move leaves the object where it was.
 */

/** Which node ran each call, in order (the log a test reads to prove nothing ran twice). */
const ran: { node: string; seq: number }[] = [];

class Counter {
  n = 0;
  ticks = 0;
  node = '';
  onActivate(ctx: ZLinkObjectScope): void {
    this.node = ctx.self.rid;
    ctx.timers.setInterval(() => this.tick(), 20, 'tick');
  }
  tick(): void {
    this.ticks++;
  }
  add(payload: { seq: number }, ctx: ZLinkObjectContext): { n: number; node: string } {
    this.n++;
    ran.push({ node: ctx.self.rid, seq: payload.seq });
    return { n: this.n, node: ctx.self.rid };
  }
  async slow(payload: { ms: number }): Promise<number> {
    await new Promise((r) => setTimeout(r, payload.ms));
    return this.n;
  }
  read(): { n: number; ticks: number; node: string } {
    return { n: this.n, ticks: this.ticks, node: this.node };
  }
  capture(): unknown {
    return { n: this.n, ticks: this.ticks };
  }
  restore(state: { n: number; ticks: number }, ctx: ZLinkObjectScope): void | Promise<void> {
    this.n = state.n;
    this.ticks = state.ticks;
    this.node = ctx.self.rid;
  }
}

class Refuses extends Counter {
  override restore(): void {
    throw new Error('no room here');
  }
}

/** The test opens this gate to let a target's `restore` return (a target slow to restore). */
let gate: Promise<void> = Promise.resolve();
let openGate: () => void = () => undefined;
const closeGate = (): void => {
  gate = new Promise((r) => (openGate = r));
};

class SlowRestore extends Counter {
  override async restore(state: { n: number; ticks: number }, ctx: ZLinkObjectScope): Promise<void> {
    void super.restore(state, ctx);
    await gate;
  }
}

const counterClass = (token: new () => object = Counter): ObjectClassDescription => ({
  ...objectClass('spot', 'counter', token, ['add', 'slow', 'read']),
  options: { relocatable: true },
});

const runtimes: ZLinkRuntime[] = [];
afterEach(async () => {
  ran.length = 0;
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

/** Until `check` holds (bounded). */
async function waitUntil(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function world(targetClass: ObjectClassDescription = counterClass()) {
  const store = new MemoryLocationStore();
  const moves = new MemoryRelocationStore();
  return { ...(await worldOn(store, moves, targetClass)), store, moves };
}

async function worldOn(
  store: MemoryLocationStore,
  moves: MemoryRelocationStore,
  targetClass: ObjectClassDescription,
) {
  const relocationStore = { instance: moves, keyPrefix: 'moves' };
  const start = async (role: 'server' | 'client', rid: string, cls?: ObjectClassDescription) => {
    const r = await startRuntime(
      objectMeshOptions(store, role, rid, role === 'server' ? { relocationStore } : {}),
      cls && registry(cls),
    );
    runtimes.push(r);
    return r;
  };
  const a = await start('server', 'server-a', counterClass());
  const b = await start('server', 'server-b', targetClass);
  const client = await start('client', 'client-1');
  for (const r of [a, b, client]) await r.waitForPeers('objects', 2);
  return { a, b, client };
}

describe('relocation between two object servers', () => {
  it('moves state, waiting calls and a labelled timer; calls during the move run once, in order', async () => {
    const { a, b, client, moves } = await world();
    const sourceEvents: ZLinkEvent[] = [];
    a.events.subscribe((e) => void sourceEvents.push(e), { perMessage: false });
    const ref = await client.objects.createSpot('counter', 'c-1', { node: 'server-a' });
    const spot = client.routeClient.toSpot('c-1');
    for (let seq = 0; seq < 5; seq++) await spot.request('add', { seq }).async();
    await new Promise((r) => setTimeout(r, 100));
    const before = (await spot.request('read', null).async()) as { ticks: number };
    expect(before.ticks).toBeGreaterThan(0);

    const events: ZLinkEvent[] = [];
    b.events.subscribe((e) => void events.push(e), { perMessage: false });
    // A running turn (the seal waits for it), then calls that wait in its queue and calls held after the seal.
    const slow = spot.request('slow', { ms: 150 }).async();
    const during: Promise<unknown>[] = [];
    for (let seq = 5; seq < 10; seq++) during.push(spot.request('add', { seq }).async());
    const clientEvents: ZLinkEvent[] = [];
    client.events.subscribe((e) => void clientEvents.push(e), { perMessage: false });
    let settled = false;
    const moved = client.objects.relocate('c-1', { target: 'server-b' }).finally(() => (settled = true));
    // Calls keep coming while the object moves (held after the seal, relayed, then followed), and after.
    let seq = 10;
    while (!settled || seq < 60) {
      during.push(spot.request('add', { seq: seq++ }).async());
      await new Promise((r) => setTimeout(r, 3));
    }
    const result = await moved;
    expect(result).toMatchObject({ outcome: 'committed', owner: 'server-b' });
    expect(result.outcome === 'committed' && result.ref).toMatchObject({
      id: 'c-1',
      rid: 'server-b',
      objectGeneration: ref.objectGeneration,
    });
    await slow;
    const answers = (await Promise.all(during)) as { n: number }[];
    const total = seq;
    expect(answers.map((x) => x.n)).toEqual(Array.from({ length: total - 5 }, (_, i) => i + 6));
    // Every call ran exactly once, in the order sent: on a before the move, on b after.
    expect(ran.map((r) => r.seq)).toEqual(Array.from({ length: total }, (_, i) => i));
    const firstOnB = ran.findIndex((r) => r.node === 'server-b');
    expect(firstOnB).toBeGreaterThan(4);
    expect(ran.slice(firstOnB).every((r) => r.node === 'server-b')).toBe(true);

    const after = (await spot.request('read', null).async()) as { n: number; ticks: number; node: string };
    expect(after).toMatchObject({ n: total, node: 'server-b' });
    expect(after.ticks).toBeGreaterThanOrEqual(before.ticks);
    await new Promise((r) => setTimeout(r, 100));
    const later = (await spot.request('read', null).async()) as { ticks: number };
    expect(later.ticks).toBeGreaterThan(after.ticks);

    expect(a.snapshot().objects?.activations).toEqual([]);
    expect(b.snapshot().objects?.activations.map((x) => x.id)).toEqual(['c-1']);
    expect(await client.objects.resolve('spot', 'c-1')).toMatchObject({
      tag: 'ReadyRoute',
      owner: { rid: 'server-b' },
      authorityOwnerGeneration: 2,
    });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'object', state: 'activated', id: 'c-1', reason: 'relocated' }),
    );
    const phases = sourceEvents.filter((e) => e.type === 'object_relocation').map((e) => e.phase);
    expect(phases).toEqual(['started', 'relayReady', 'committed']);
    const committed = sourceEvents.find((e) => e.type === 'object_relocation' && e.phase === 'committed');
    expect(committed).toMatchObject({ id: 'c-1', peerRid: 'server-b', pauseMs: expect.any(Number) });
    // The move's record: committed, with both ends' fences and the follow duration.
    await new Promise((r) => setTimeout(r, 20));
    const record = await moves.get({ mesh: 'objects', kind: 'spot', id: 'c-1' });
    expect(record?.record).toMatchObject({
      state: 'committed',
      type: 'counter',
      objectGeneration: ref.objectGeneration,
      source: { rid: 'server-a', authorityOwnerGeneration: 1 },
      target: { rid: 'server-b', authorityOwnerGeneration: 2 },
      followMs: 30000,
    });
    // A call on the old route was relayed and the caller told: it dropped exactly that entry.
    expect(clientEvents).toContainEqual(
      expect.objectContaining({ type: 'object_route', result: 'invalidated', id: 'c-1', reason: 'moved' }),
    );
  });

  it('a refused restore aborts: the object stays and runs what arrived meanwhile, once each', async () => {
    const { a, client, moves } = await world(counterClass(Refuses));
    await client.objects.createSpot('counter', 'c-2', { node: 'server-a' });
    const spot = client.routeClient.toSpot('c-2');
    await spot.request('add', { seq: 0 }).async();
    const during: Promise<unknown>[] = [];
    const moved = client.objects.relocate('c-2', { target: 'server-b' });
    for (let seq = 1; seq < 20; seq++) during.push(spot.request('add', { seq }).async());
    const result = await moved;
    expect(result).toMatchObject({ outcome: 'aborted', code: 'RemoteError' });
    expect(result.outcome === 'aborted' && result.reason).toMatch(/no room here/);
    expect(((await Promise.all(during)) as { n: number }[]).map((x) => x.n)).toEqual(
      Array.from({ length: 19 }, (_, i) => i + 2),
    );
    expect(ran.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(ran.every((r) => r.node === 'server-a')).toBe(true);
    expect(a.snapshot().objects?.activations.map((x) => x.id)).toEqual(['c-2']);
    await new Promise((r) => setTimeout(r, 20));
    expect((await moves.get({ mesh: 'objects', kind: 'spot', id: 'c-2' }))?.record.state).toBe('aborted');
  });

  it('refuses what cannot move, before anything moves', async () => {
    const { client } = await world();
    const ref = await client.objects.createSpot('counter', 'c-3', { node: 'server-a' });
    await expect(client.objects.relocate('nope')).rejects.toMatchObject({ code: 'NotFound' });
    await expect(client.objects.relocate('c-3', { target: 'server-a' })).rejects.toMatchObject({
      code: 'InvalidOperation',
    });
    await expect(client.objects.relocate('c-3', { target: 'client-1' })).rejects.toMatchObject({
      code: 'NotFound',
    });
    await expect(
      client.objects.relocate({ ...ref, objectGeneration: ref.objectGeneration + 1 }),
    ).rejects.toMatchObject({ code: 'InvalidOperation', details: { reason: 'staleRef' } });
    expect(await client.objects.relocate(ref)).toMatchObject({ outcome: 'committed', owner: 'server-b' });
  });

  it('a move that times out while the running turn ends: what arrived meanwhile runs here, once, in order', async () => {
    const { a, client } = await world();
    await client.objects.createSpot('counter', 'c-4', { node: 'server-a' });
    const spot = client.routeClient.toSpot('c-4');
    const slow = spot.request('slow', { ms: 400 }).async();
    await new Promise((r) => setTimeout(r, 20));
    const moved = client.objects.relocate('c-4', { target: 'server-b', timeoutMs: 100 });
    await new Promise((r) => setTimeout(r, 200));
    // The move is over (its deadline passed) but the seal still waits for the running turn.
    const during = Array.from({ length: 10 }, (_, seq) => spot.request('add', { seq }).async());
    expect(await moved).toMatchObject({ outcome: 'aborted', code: 'Timeout' });
    await slow;
    expect(((await Promise.all(during)) as { n: number }[]).map((x) => x.n)).toEqual(
      Array.from({ length: 10 }, (_, i) => i + 1),
    );
    expect(ran.map((r) => r.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(a.snapshot().objects?.activations.map((x) => x.id)).toEqual(['c-4']);
  });

  it('the target gives up after the go (the record changed): the source runs what it had relayed', async () => {
    closeGate();
    const { a, client, store } = await world(counterClass(SlowRestore));
    await client.objects.createSpot('counter', 'c-5', { node: 'server-a' });
    const spot = client.routeClient.toSpot('c-5');
    await spot.request('add', { seq: 0 }).async();
    const moved = client.objects.relocate('c-5', { target: 'server-b' });
    await new Promise((r) => setTimeout(r, 50));
    const during = Array.from({ length: 10 }, (_, i) => spot.request('add', { seq: i + 1 }).async());
    // A write nobody in the move made: the target's CAS will not find the version it expects.
    const authority = store.authorityStore();
    const key = { mesh: 'objects', kind: 'spot' as const, id: 'c-5' };
    const held = await authority.get(key);
    expect((await authority.compareAndSet(key, held!.version, held!.record)).ok).toBe(true);
    openGate();
    expect(await moved).toMatchObject({ outcome: 'aborted', code: 'Unavailable' });
    expect(((await Promise.all(during)) as { n: number }[]).map((x) => x.n)).toEqual(
      Array.from({ length: 10 }, (_, i) => i + 2),
    );
    expect(ran.map((r) => r.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i));
    expect(ran.every((r) => r.node === 'server-a')).toBe(true);
    expect(a.snapshot().objects?.activations.map((x) => x.id)).toEqual(['c-5']);
  });

  it('destroy waits for no move: a moving object refuses it, Unavailable', async () => {
    closeGate();
    const { client } = await world(counterClass(SlowRestore));
    const ref = await client.objects.createSpot('counter', 'c-6', { node: 'server-a' });
    const moved = client.objects.relocate('c-6', { target: 'server-b' });
    await new Promise((r) => setTimeout(r, 50));
    await expect(client.objects.destroy(ref)).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'relocating' },
    });
    openGate();
    expect(await moved).toMatchObject({ outcome: 'committed', owner: 'server-b' });
    await client.objects.destroy({ ...ref, rid: 'server-b' });
    await expect(client.routeClient.toSpot('c-6').request('read', null).async()).rejects.toMatchObject({
      code: 'NotFound',
    });
  });

  it('a follow duration changed at run time applies to later moves; the pairing rule still holds', async () => {
    const { a, client } = await world();
    await expect(a.objects.setMessageFollowDuration(10000)).rejects.toMatchObject({
      code: 'InvalidArgument',
      details: { argument: 'messageFollowDurationMs' },
    });
    await expect(a.objects.setMessageFollowDuration(-1)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await client.objects.createSpot('counter', 'c-7', { node: 'server-a' });
    await client.objects.createSpot('counter', 'c-8', { node: 'server-a' });
    const early = client.routeClient.toSpot('c-7');
    const late = client.routeClient.toSpot('c-8');
    await early.request('add', { seq: 0 }).async();
    await late.request('add', { seq: 1 }).async();
    expect(await client.objects.relocate('c-7', { target: 'server-b' })).toMatchObject({
      outcome: 'committed',
    });
    await a.objects.setMessageFollowDuration(0);
    expect(await client.objects.relocate('c-8', { target: 'server-b' })).toMatchObject({
      outcome: 'committed',
    });
    await new Promise((r) => setTimeout(r, 20));
    // The move before the change still relays; the one after it does not (the caller reads again next time).
    expect(await early.request('add', { seq: 2 }).async()).toMatchObject({ node: 'server-b' });
    await expect(late.request('add', { seq: 3 }).async()).rejects.toMatchObject({ code: 'Unavailable' });
    expect(await late.request('add', { seq: 4 }).async()).toMatchObject({ node: 'server-b' });
  });

  it('a relocating drain leaves no caller a route to it: the next send of an idle caller reaches the new owner', async () => {
    const store = new MemoryLocationStore();
    const relocationStore = { instance: new MemoryRelocationStore(), keyPrefix: 'moves' };
    const draining = (rid: string) => {
      const options = objectMeshOptions(store, 'server', rid, { relocationStore });
      const mesh = options.meshes?.objects as object;
      return { ...options, meshes: { objects: { ...mesh, objects: { onDrain: 'relocate' as const } } } };
    };
    const a = await startRuntime(draining('server-a'), registry(counterClass()));
    const b = await startRuntime(draining('server-b'), registry(counterClass()));
    const client = await startRuntime(objectMeshOptions(store, 'client', 'client-1'));
    runtimes.push(a, b, client);
    for (const r of [a, b, client]) await r.waitForPeers('objects', 2);
    await client.objects.createSpot('counter', 'c-leave', { node: 'server-a' });
    const spot = client.routeClient.toSpot('c-leave');
    // The client caches the route to server-a, then calls nothing while server-a drains.
    expect(await spot.request('add', { seq: 0 }).async()).toMatchObject({ n: 1, node: 'server-a' });
    const seen: ZLinkEvent[] = [];
    client.events.subscribe((e) => void seen.push(e), { perMessage: false });
    await a.drain();
    // Before server-a closes, the client has dropped its route there (server-a waited for its answer).
    expect(seen).toContainEqual(
      expect.objectContaining({
        type: 'object_route',
        result: 'invalidated',
        id: 'c-leave',
        reason: 'ownerLeaving',
      }),
    );
    await a.close();
    // The next send reads the new owner: it runs there (a send to the closed node would be lost).
    await spot.send('add', { seq: 1 }).async();
    expect(await spot.request('read', null).async()).toMatchObject({ n: 2, node: 'server-b' });
    expect(ran.map((r) => r.seq)).toEqual([0, 1]);
  });

  it('a call sent straight to the target between its authority CAS and its opening waits for it (a send is not lost)', async () => {
    const store = new MemoryLocationStore();
    const moves = new MemoryRelocationStore();
    // server-b's CAS lands in the store at once, but server-b hears so only when the test says.
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const inner = store.authorityStore();
    const slowCas = Object.assign(Object.create(store) as MemoryLocationStore, {
      authorityStore: () =>
        Object.assign(Object.create(inner) as typeof inner, {
          compareAndSet: async (...args: Parameters<typeof inner.compareAndSet>) => {
            const result = await inner.compareAndSet(...args);
            await held;
            return result;
          },
        }),
    });
    const relocationStore = { instance: moves, keyPrefix: 'moves' };
    const start = async (role: 'server' | 'client', rid: string, on: MemoryLocationStore) => {
      const r = await startRuntime(
        objectMeshOptions(on, role, rid, role === 'server' ? { relocationStore } : {}),
        role === 'server' ? registry(counterClass()) : undefined,
      );
      runtimes.push(r);
      return r;
    };
    const a = await start('server', 'server-a', store);
    const b = await start('server', 'server-b', slowCas);
    const client = await start('client', 'client-1', store);
    for (const r of [a, b, client]) await r.waitForPeers('objects', 2);
    await a.objects.createSpot('counter', 'c-cas', { node: 'server-a' });
    const moved = a.objects.relocate('c-cas', { target: 'server-b' });
    const key = { mesh: 'objects', kind: 'spot' as const, id: 'c-cas' };
    await waitUntil(async () => (await inner.get(key))?.record.owner.rid === 'server-b');
    // The client has no route yet: it reads the record server-b's CAS wrote and sends straight there.
    const dropped: string[] = [];
    client.events.subscribe((e) => void (e.type === 'object_route' && dropped.push(String(e.reason))), {
      perMessage: false,
    });
    await client.routeClient.toSpot('c-cas').send('add', { seq: 0 }).async();
    // The send is queued at the client: let it reach server-b while the move is still cutting over
    // (nothing tells the test that a call waits there; refused, it would come back as staleRoute).
    await new Promise((r) => setTimeout(r, 100));
    expect(b.snapshot().objects?.activations).toEqual([]);
    release();
    expect(await moved).toMatchObject({ outcome: 'committed', owner: 'server-b' });
    expect(await client.routeClient.toSpot('c-cas').request('read', null).async()).toMatchObject({
      n: 1,
      node: 'server-b',
    });
    expect(ran).toEqual([{ node: 'server-b', seq: 0 }]);
    expect(dropped).not.toContain('staleRoute');
  });
});
