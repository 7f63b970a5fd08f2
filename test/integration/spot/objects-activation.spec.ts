import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryLocationStore, ZLinkError, type ZLinkEvent, type ZLinkRuntime } from '../../../lib/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from './harness.js';

/**
 * When user code misbehaves: an `onActivate` that never ends settles its creation by the deadline and
 * is cleaned up once it returns; what a class's construction or `onActivate` threw ends `RemoteError`
 * on the owner as from a peer, a `ZLinkError` the user threw included; a one-way send whose handler
 * throws is reported on its owner whoever sent it; a turn that never ends does not hold the runtime's
 * close past `drainTimeoutMs`.
 */

const hooks: string[] = [];
/** Promises user code returns and the test settles (each left over is settled after the test). */
const held: (() => void)[] = [];
const hold = (): Promise<void> => new Promise((r) => held.push(r));
const release = (): void => held.splice(0).forEach((open) => open());

class Slow {
  onActivate(): Promise<void> {
    hooks.push('onActivate');
    return hold();
  }
  onDeactivate(_ctx: unknown, reason: string): void {
    hooks.push(`onDeactivate ${reason}`);
  }
}

class Refuses {
  onActivate(): void {
    throw new ZLinkError('NotFound', 'no such room in the database');
  }
}

class BadConstructor {
  constructor() {
    throw new Error('cannot build');
  }
}

class Hangs {
  hang(): Promise<void> {
    return hold();
  }
}

class Faulty {
  boom(): never {
    throw new Error('boom');
  }
}

const classes = () =>
  registry(
    objectClass('spot', 'faulty', Faulty, ['boom']),
    objectClass('spot', 'slow', Slow, []),
    objectClass('spot', 'refuses', Refuses, []),
    objectClass('spot', 'bad', BadConstructor, []),
    objectClass('spot', 'hangs', Hangs, ['hang']),
  );

const runtimes: ZLinkRuntime[] = [];
afterEach(async () => {
  hooks.length = 0;
  release();
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

async function server(store: MemoryLocationStore, extra = {}): Promise<ZLinkRuntime> {
  const r = await startRuntime(objectMeshOptions(store, 'server', 'a', extra), classes());
  runtimes.push(r);
  return r;
}

async function client(store: MemoryLocationStore): Promise<ZLinkRuntime> {
  const r = await startRuntime(objectMeshOptions(store, 'client', 'c'));
  runtimes.push(r);
  await r.waitForPeers('objects', 1);
  return r;
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: 'resolved' }),
    (e: ZLinkError) => ({ code: e.code, remote: e.remote?.code, details: e.details }),
  );

describe('object creation and user code', () => {
  it('an onActivate past the deadline ends the creation Unavailable; once it returns the claim is gone', async () => {
    const store = new MemoryLocationStore();
    const a = await server(store);
    const started = Date.now();
    const got = await outcome(a.objects.createSpot('slow', 's1', { timeoutMs: 200 }));
    expect(got).toMatchObject({ code: 'Unavailable', details: { reason: 'activationTimeout' } });
    expect(Date.now() - started).toBeLessThan(2000);
    // The hook still runs: the creating record stays (nobody else may build it meanwhile).
    expect(a.snapshot().objects?.activations).toEqual([expect.objectContaining({ id: 's1' })]);
    expect((await a.objects.resolve('spot', 's1')).tag).not.toBe('Missing');

    release();
    const end = Date.now() + 5000;
    while ((await a.objects.resolve('spot', 's1')).tag !== 'Missing' && Date.now() < end)
      await new Promise((r) => setTimeout(r, 10));
    expect((await a.objects.resolve('spot', 's1')).tag).toBe('Missing');
    expect(a.snapshot().objects?.activations).toEqual([]);
    expect(hooks).toEqual(['onActivate', 'onDeactivate failed']);
    // The id is free again.
    const created = a.objects.createSpot('slow', 's1', { timeoutMs: 5000 });
    const until = Date.now() + 5000;
    while (hooks.length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    release();
    await expect(created).resolves.toMatchObject({ id: 's1', rid: 'a' });
  });

  it("a ZLinkError('NotFound') thrown in onActivate is the user's RemoteError, on the owner and from a peer", async () => {
    const store = new MemoryLocationStore();
    const a = await server(store);
    const c = await client(store);
    const userNotFound = { code: 'RemoteError', remote: 'NotFound' };
    expect(await outcome(a.objects.createSpot('refuses', 'r1'))).toMatchObject(userNotFound);
    expect(await outcome(c.objects.createSpot('refuses', 'r2'))).toMatchObject(userNotFound);
    expect(await outcome(a.objects.createSpot('bad', 'b1'))).toMatchObject({
      code: 'RemoteError',
      remote: 'HandlerError',
    });
    expect(await outcome(c.objects.createSpot('bad', 'b2'))).toMatchObject({
      code: 'RemoteError',
      remote: 'HandlerError',
    });
    for (const id of ['r1', 'r2', 'b1', 'b2'])
      expect((await a.objects.resolve('spot', id)).tag).toBe('Missing');
    // The framework's own NotFound stays NotFound: a type no server hosts.
    expect(await outcome(c.objects.createSpot('nope', 'n1'))).toMatchObject({ code: 'NotFound' });
  });

  it('a one-way send whose handler throws is reported on its owner, from a local sender as from a peer', async () => {
    const store = new MemoryLocationStore();
    const a = await server(store);
    const c = await client(store);
    await a.objects.createSpot('faulty', 'f1');
    const failed: ZLinkEvent[] = [];
    a.events.subscribe((e) => e.type === 'delivery' && e.result !== 'ok' && failed.push(e), {
      perMessage: false,
    });
    await a.routeClient.toSpot('f1').send('boom', null).async();
    await c.routeClient.toSpot('f1').send('boom', null).async();
    const end = Date.now() + 5000;
    while (failed.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(failed).toEqual(
      ['a', 'c'].map((sourceRid) =>
        expect.objectContaining({ result: 'handler_error', kind: 'send', packet: 'boom', sourceRid }),
      ),
    );
    const scope = a.metrics().scopes.find((x) => x.route === 'route-mesh' && x.mesh === 'objects');
    expect(scope?.deliveries).toMatchObject({ handler_error: 2 });
  });

  it('a turn that never ends holds close no longer than drainTimeoutMs, and is reported failed', async () => {
    const store = new MemoryLocationStore();
    const a = await server(store, { drainTimeoutMs: 300 });
    const seen: ZLinkEvent[] = [];
    a.events.subscribe((e) => seen.push(e), { perMessage: false });
    await a.objects.createSpot('hangs', 'h1');
    const call = outcome(a.routeClient.toSpot('h1').request('hang', null).async({ timeoutMs: 20000 }));
    const end = Date.now() + 5000;
    while (!a.snapshot().objects?.activations.some((x) => x.busy) && Date.now() < end)
      await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    await a.close();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(2000);
    expect(await call).toMatchObject({ code: 'Shutdown' });
    expect(seen).toContainEqual(expect.objectContaining({ type: 'object', state: 'failed', id: 'h1' }));
  });
});
