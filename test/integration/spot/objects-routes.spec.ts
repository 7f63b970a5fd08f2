/**
 * Routes by global id between runtimes on one real mesh, in one process (MemoryLocationStore): a
 * stale cached route ends the call `Unavailable` and drops exactly that entry (the next call reads
 * the store and reaches the new owner); nothing is resent to another owner; Node direct and object
 * payloads never reach each other's handlers; events, metrics, Prometheus text, snapshot and health
 * show the objects.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  MemoryLocationStore,
  type ZLinkEvent,
  type ZLinkRuntime,
  checkZLinkHealth,
} from '../../../lib/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from './harness.js';

let handled: string[] = [];

class Counter {
  n = 0;
  bump(_: unknown, ctx: { self: { rid: string } }): { n: number; rid: string } {
    handled.push(ctx.self.rid);
    return { n: ++this.n, rid: ctx.self.rid };
  }
}

const classes = () => registry(objectClass('spot', 'counter', Counter, ['bump']));
const runtimes: ZLinkRuntime[] = [];
afterEach(async () => {
  handled = [];
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

async function three() {
  const store = new MemoryLocationStore();
  const a = await startRuntime(objectMeshOptions(store, 'server', 'server-a'), classes());
  const b = await startRuntime(objectMeshOptions(store, 'server', 'server-b'), classes());
  const c = await startRuntime(objectMeshOptions(store, 'client', 'caller'));
  runtimes.push(a, b, c);
  for (const r of [a, b, c]) await r.waitForPeers('objects', 2);
  return { a, b, c };
}

describe('object routes', () => {
  it('a stale cached route ends Unavailable once, drops the entry, and the next call finds the new owner', async () => {
    const { a, c } = await three();
    const ref = await c.objects.createSpot('counter', 'k', { node: 'server-a' });
    expect((await c.routeClient.toSpot('k').request('bump', null).async()) as object).toEqual({
      n: 1,
      rid: 'server-a',
    });
    // Re-created elsewhere behind the caller's back: its cached route names server-a's incarnation.
    await a.objects.destroy(ref);
    await a.objects.createSpot('counter', 'k', { node: 'server-b' });
    const events: ZLinkEvent[] = [];
    c.events.subscribe((e) => events.push(e), { perMessage: false });
    await expect(c.routeClient.toSpot('k').request('bump', null).async()).rejects.toMatchObject({
      code: 'Unavailable',
    });
    expect(
      events.some(
        (e) => e.type === 'object_route' && e.result === 'invalidated' && e.reason === 'staleRoute',
      ),
    ).toBe(true);
    expect((await c.routeClient.toSpot('k').request('bump', null).async()) as object).toEqual({
      n: 1,
      rid: 'server-b',
    });
    // The failed call ran nowhere: server-a refused it, server-b saw only the call after it.
    expect(handled).toEqual(['server-a', 'server-b']);
  });

  it('a stale send is told back to its sender, which then reads the store again', async () => {
    const { a, c } = await three();
    const ref = await c.objects.createSpot('counter', 's', { node: 'server-a' });
    await c.routeClient.toSpot('s').request('bump', null).async();
    await a.objects.destroy(ref);
    await a.objects.createSpot('counter', 's', { node: 'server-b' });
    const dropped = new Promise<void>((resolve) =>
      c.events.subscribe((e) => {
        if (e.type === 'object_route' && e.result === 'invalidated') resolve();
      }),
    );
    await c.routeClient.toSpot('s').send('bump', null).async();
    await dropped;
    expect((await c.routeClient.toSpot('s').request('bump', null).async()) as object).toMatchObject({
      rid: 'server-b',
    });
  });

  it('keeps Node direct and object payloads apart', async () => {
    const { c } = await three();
    await c.objects.createSpot('counter', 'iso', { node: 'server-a' });
    // A Node direct request for a packet only an object handles reaches no object handler.
    await expect(
      c.routeClient.requestToNode('objects', 'server-a', 'bump', null).async(),
    ).rejects.toMatchObject({
      code: 'RemoteError',
      remote: { code: 'NoHandler' },
    });
    expect(handled).toEqual([]);
    // An object request for a packet the class has no handler for: NoHandler, from the owner.
    await expect(c.routeClient.toSpot('iso').request('nothing', null).async()).rejects.toMatchObject({
      remote: { code: 'NoHandler' },
    });
  });

  it('shows objects in events, metrics, Prometheus text, snapshot and health', async () => {
    const { a, c } = await three();
    const seen: ZLinkEvent[] = [];
    a.events.subscribe((e) => seen.push(e), { perMessage: false });
    const hits: ZLinkEvent[] = [];
    c.events.subscribe((e) => hits.push(e));
    await c.objects.createSpot('counter', 'm', { node: 'server-a' });
    for (let i = 0; i < 3; i++) await c.routeClient.toSpot('m').request('bump', null).async();
    expect(seen.filter((e) => e.type === 'object').map((e) => (e as { state: string }).state)).toEqual([
      'activated',
    ]);
    expect(
      hits.filter((e) => e.type === 'object_route').map((e) => (e as { result: string }).result),
    ).toEqual(['miss', 'hit', 'hit']);
    const callerMetrics = c.metrics().objects.find((o) => o.type === 'counter');
    expect(callerMetrics).toMatchObject({ kind: 'spot', requests: 3, replies: 3, storeReads: 1 });
    const ownerMetrics = a.metrics().objects.find((o) => o.type === 'counter');
    expect(ownerMetrics).toMatchObject({ handled: 3, activations: 1, queueDepth: 0 });
    expect(a.prometheus()).toContain(
      'zlink_object_activations_total{kind="spot",type="counter",state="activated"} 1',
    );
    expect(c.prometheus()).toContain('zlink_object_calls_total{kind="spot",type="counter",call="request"} 3');
    expect(a.snapshot().objects).toMatchObject({ mesh: 'objects', role: 'server', fenced: false });
    expect(a.snapshot().objects?.activations).toEqual([
      expect.objectContaining({ kind: 'spot', type: 'counter', id: 'm', state: 'ready', queued: 0 }),
    ]);
    expect(c.snapshot().objects?.routeCacheSize).toBe(1);
    const health = await checkZLinkHealth(c);
    expect(health.objects).toEqual({
      mesh: 'objects',
      role: 'client',
      ready: true,
      activations: 0,
      objectServers: 2,
    });
    expect(health.healthy).toBe(true);
  });

  it('changes the route cache age at run time for new entries only, within the Message Follow rule', async () => {
    const { c } = await three();
    await c.objects.createSpot('counter', 'age', { node: 'server-a' });
    const routes: string[] = [];
    c.events.subscribe((e) => {
      if (e.type === 'object_route') routes.push(e.result);
    });
    await c.routeClient.toSpot('age').request('bump', null).async();
    await c.objects.setRouteCacheMaxAge(0);
    // The entry made before keeps its lifetime; nothing new is cached.
    await c.routeClient.toSpot('age').request('bump', null).async();
    await c.objects.createSpot('counter', 'age-2', { node: 'server-a' });
    await c.routeClient.toSpot('age-2').request('bump', null).async();
    await c.routeClient.toSpot('age-2').request('bump', null).async();
    expect(routes).toEqual(['miss', 'hit', 'miss', 'miss']);
    await expect(c.objects.setRouteCacheMaxAge(25001)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(c.objects.setRouteCacheMaxAge(-1)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await c.objects.setRouteCacheMaxAge(25000);
  });
});
