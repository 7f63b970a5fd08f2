import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryLocationStore, type ZLinkObjectContext, type ZLinkRuntime } from '../../../lib/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime } from './harness.js';

class Room {
  members: string[] = [];
  activatedWith: unknown;
  onActivate(ctx: { init: unknown }): void {
    this.activatedWith = ctx.init;
  }
  join(payload: { who: string }, ctx: ZLinkObjectContext): { members: string[]; id: string; gen: number } {
    this.members.push(payload.who);
    return { members: [...this.members], id: ctx.id, gen: ctx.objectGeneration };
  }
  init(): unknown {
    return this.activatedWith;
  }
}

const classes = () => registry(objectClass('spot', 'room', Room, ['join', 'init']));

const runtimes: ZLinkRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

describe('Spots by global id between two runtimes', () => {
  it('creates on the object server, calls from a client, and a local call on the owner', async () => {
    const store = new MemoryLocationStore();
    const server = await startRuntime(objectMeshOptions(store, 'server', 'server-a'), classes());
    runtimes.push(server);
    const client = await startRuntime(objectMeshOptions(store, 'client', 'client-a'));
    runtimes.push(client);
    await client.waitForPeers('objects', 1);
    await server.waitForPeers('objects', 1);

    const ref = await client.objects.createSpot('room', 'room-1', { init: { name: 'lobby' } });
    expect(ref).toMatchObject({ kind: 'spot', type: 'room', id: 'room-1', rid: 'server-a' });
    const r1 = await client.routeClient.toSpot('room-1').request('join', { who: 'ann' }).async();
    expect(r1).toEqual({ members: ['ann'], id: 'room-1', gen: ref.objectGeneration });
    const r2 = await server.routeClient.toSpot('room-1').request('join', { who: 'bob' }).async();
    expect(r2).toMatchObject({ members: ['ann', 'bob'] });
    expect(await client.routeClient.toSpot('room-1').request('init', null).async()).toEqual({
      name: 'lobby',
    });
    await client.routeClient.toSpot('room-1').send('join', { who: 'cid' }).async();
    expect(await client.routeClient.toSpot('room-1').request('join', { who: 'dan' }).async()).toMatchObject({
      members: ['ann', 'bob', 'cid', 'dan'],
    });

    await expect(client.routeClient.toSpot('nope').request('join', {}).async()).rejects.toMatchObject({
      code: 'NotFound',
    });
    await expect(client.objects.createSpot('room', 'room-1')).rejects.toMatchObject({
      code: 'InvalidOperation',
    });
    const again = await client.objects.getOrCreateSpot('room', 'room-1');
    expect(again).toEqual(ref);

    const made = await client.routeClient
      .toSpot('room-2')
      .instance('room', 'x')
      .request('init', null)
      .async();
    expect(made).toBe('x');

    await client.objects.destroy(ref);
    await expect(client.routeClient.toSpot('room-1').request('join', {}).async()).rejects.toMatchObject({
      code: 'NotFound',
    });
    await expect(client.objects.destroy(ref)).rejects.toMatchObject({ code: 'NotFound' });
    expect((await client.objects.resolve('spot', 'room-2')).tag).toBe('ReadyRoute');
    expect(server.snapshot().objects?.activations.map((a) => a.id)).toEqual(['room-2']);
  });
});
