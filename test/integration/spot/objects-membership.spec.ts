import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type ActorRef,
  MemoryLocationStore,
  MemoryRelocationStore,
  type MemberLeaveReason,
  ObjectClassRegistry,
  type ObjectClassDescription,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
  type ZLinkRuntime,
} from '../../../lib/index.js';
import { objectClass, objectMeshOptions, registry, startRuntime, membersOf, where } from './harness.js';

/**
 * Actors in Spots between two object servers and a client (real sockets, the memory store): an Actor
 * joins a Spot on the Spot's owner (moved there first), the Spot hears joins and leaves in its own
 * turns, and a Spot that moves takes the members beside it along — each object its own move, calls to
 * each answered once, in each sender's order.
 */

/** What the Spots heard, in order: `join room p1`, `leave room p1 left`. */
const heard: string[] = [];
/** Which node ran each call to each object, in order. */
const ran: { target: string; node: string; seq: number }[] = [];

class Room {
  said = 0;
  onActorJoin(ctx: ZLinkObjectScope, actor: ActorRef): void {
    if (actor.id.startsWith('banned')) throw new Error(`${actor.id} may not join`);
    heard.push(`join ${ctx.id} ${actor.id} ${actor.type}`);
  }
  onActorLeave(ctx: ZLinkObjectScope, actorId: string, reason: MemberLeaveReason): void {
    heard.push(`leave ${ctx.id} ${actorId} ${reason}`);
  }
  say(payload: { seq: number }, ctx: ZLinkObjectContext): number {
    ran.push({ target: ctx.id, node: ctx.self.rid, seq: payload.seq });
    return ++this.said;
  }
  members(_: unknown, ctx: ZLinkObjectContext): { members: readonly string[]; node: string } {
    return { members: ctx.membership.members(), node: ctx.self.rid };
  }
  capture(): unknown {
    return { said: this.said };
  }
  restore(state: { said: number }): void {
    this.said = state.said;
  }
}

class Player {
  hits = 0;
  hit(payload: { seq: number }, ctx: ZLinkObjectContext): number {
    ran.push({ target: ctx.id, node: ctx.self.rid, seq: payload.seq });
    return ++this.hits;
  }
  where(_: unknown, ctx: ZLinkObjectContext): { spot: string | undefined; node: string } {
    return { spot: ctx.membership.spot, node: ctx.self.rid };
  }
  capture(): unknown {
    return { hits: this.hits };
  }
  restore(state: { hits: number }, ctx: ZLinkObjectScope): void {
    if (ctx.id === 'stuck' && ctx.self.rid === 'server-b') throw new Error('not on b');
    this.hits = state.hits;
  }
}

const roomClass: ObjectClassDescription = {
  ...objectClass('spot', 'room', Room, ['say', 'members']),
  options: { relocatable: true },
};
const playerClass: ObjectClassDescription = {
  ...objectClass('actor', 'player', Player, ['hit', 'where']),
  options: { relocatable: true },
};

const runtimes: ZLinkRuntime[] = [];
afterEach(async () => {
  heard.length = 0;
  ran.length = 0;
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

async function world() {
  const store = new MemoryLocationStore();
  const relocationStore = { instance: new MemoryRelocationStore(), keyPrefix: 'moves' };
  const start = async (role: 'server' | 'client', rid: string) => {
    const r = await startRuntime(
      objectMeshOptions(store, role, rid, role === 'server' ? { relocationStore } : {}),
      role === 'server' ? registry(roomClass, playerClass) : undefined,
    );
    runtimes.push(r);
    return r;
  };
  const a = await start('server', 'server-a');
  const b = await start('server', 'server-b');
  const client = await start('client', 'client-1');
  for (const r of [a, b, client]) await r.waitForPeers('objects', 2);
  return { a, b, client };
}

/** Until `check` holds (bounded): a notice is a send, answered by nobody. */
async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Actors in Spots', () => {
  it('an Actor on another node moves to its Spot to join; the Spot hears the join in its turn', async () => {
    const { client } = await world();
    await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    const actor = await client.objects.createActor('player', 'p1', { node: 'server-b' });
    await client.routeClient.toActor('p1').request('hit', { seq: 0 }).async();
    const joined = await client.objects.join(actor, 'room-1');
    expect(joined.actor).toMatchObject({
      id: 'p1',
      rid: 'server-a',
      objectGeneration: actor.objectGeneration,
    });
    expect(joined.spot).toMatchObject({ id: 'room-1', rid: 'server-a' });
    expect(heard).toEqual(['join room-1 p1 player']);
    expect(await where(client, 'p1')).toEqual({ spot: 'room-1', node: 'server-a' });
    expect(await membersOf(client, 'room-1')).toEqual({ members: ['p1'], node: 'server-a' });
    // Its state came along: the move kept the hit made before it.
    expect(await client.routeClient.toActor('p1').request('hit', { seq: 1 }).async()).toBe(2);
    // A second join to the same Spot is the same membership: nothing heard twice.
    await client.objects.join('p1', 'room-1');
    expect(heard).toEqual(['join room-1 p1 player']);
  });

  it('a refused join changes nothing; one Spot at a time; leave is heard once and only once', async () => {
    const { client } = await world();
    await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    await client.objects.createSpot('room', 'room-2', { node: 'server-a' });
    await client.objects.createActor('player', 'banned-1', { node: 'server-a' });
    await client.objects.createActor('player', 'p2', { node: 'server-a' });
    await expect(client.objects.join('banned-1', 'room-1')).rejects.toMatchObject({
      code: 'RemoteError',
      message: expect.stringMatching(/banned-1 may not join/),
    });
    expect(await where(client, 'banned-1')).toMatchObject({ spot: undefined });
    expect((await membersOf(client, 'room-1')).members).toEqual([]);

    await client.objects.join('p2', 'room-1');
    await expect(client.objects.join('p2', 'room-2')).rejects.toMatchObject({
      code: 'InvalidOperation',
      details: { reason: 'alreadyMember', spot: 'room-1' },
    });
    expect((await membersOf(client, 'room-2')).members).toEqual([]);
    expect(await client.objects.leave('p2')).toBe('room-1');
    expect(heard).toEqual(['join room-1 p2 player', 'leave room-1 p2 left']);
    expect(await where(client, 'p2')).toMatchObject({ spot: undefined });
    expect((await membersOf(client, 'room-1')).members).toEqual([]);
    await expect(client.objects.leave('p2')).rejects.toMatchObject({
      code: 'InvalidOperation',
      details: { reason: 'notMember' },
    });
    expect(heard).toHaveLength(2);
  });

  it('a destroyed member leaves its Spot; a destroyed Spot lets its members go', async () => {
    const { client } = await world();
    const room = await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    const p1 = await client.objects.createActor('player', 'p1', { node: 'server-a' });
    await client.objects.createActor('player', 'p2', { node: 'server-a' });
    await client.objects.join(p1, room);
    await client.objects.join('p2', 'room-1');
    await client.objects.destroy(p1);
    await until(() => heard.includes('leave room-1 p1 destroyed'));
    expect((await membersOf(client, 'room-1')).members).toEqual(['p2']);
    await client.objects.destroy(room);
    await until(async () => (await where(client, 'p2')).spot === undefined);
  });

  it('refuses stale refs, wrong kinds and the runtime packets, before anything changes', async () => {
    const { client } = await world();
    const room = await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    const p1 = await client.objects.createActor('player', 'p1', { node: 'server-a' });
    await expect(client.objects.join({ ...p1, objectGeneration: 99 }, room)).rejects.toMatchObject({
      code: 'InvalidOperation',
      details: { reason: 'staleRef' },
    });
    await expect(client.objects.join(room as never, room)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(client.objects.join('p1', 'no-such-room')).rejects.toMatchObject({ code: 'NotFound' });
    await expect(
      client.routeClient.toSpot('room-1').request('zlink:join', ['p1', 1, 'player', 'server-a']).async(),
    ).rejects.toMatchObject({ code: 'InvalidArgument', details: { argument: 'packet' } });
    expect((await membersOf(client, 'room-1')).members).toEqual([]);
    expect(heard).toEqual([]);
    const forged = new ObjectClassRegistry();
    expect(() => forged.register(objectClass('spot', 'x', Room, ['zlink:join']))).toThrow(
      expect.objectContaining({ code: 'Configuration' }),
    );
  });

  it('a Spot moves with its members under traffic: each its own move, every call once, in order', async () => {
    const { a, b, client } = await world();
    await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    const players = ['p1', 'p2', 'p3'];
    for (const id of players) {
      await client.objects.createActor('player', id, { node: 'server-a' });
      await client.objects.join(id, 'room-1');
    }
    const sent: Promise<unknown>[] = [];
    let seq = 0;
    const fire = () => {
      sent.push(client.routeClient.toSpot('room-1').request('say', { seq }).async());
      for (const id of players) sent.push(client.routeClient.toActor(id).request('hit', { seq }).async());
      seq++;
    };
    for (let i = 0; i < 10; i++) fire();
    let settled = false;
    const moved = client.objects.relocate('room-1', { target: 'server-b' }).finally(() => (settled = true));
    while (!settled || seq < 60) {
      fire();
      await new Promise((r) => setTimeout(r, 2));
    }
    const result = await moved;
    expect(result).toMatchObject({ outcome: 'committed', owner: 'server-b' });
    expect(result.members).toEqual(players.map((id) => ({ id, owner: 'server-b', withSpot: true })));
    await Promise.all(sent);
    // Each object ran each of its calls once, in the order sent, the last ones on server-b.
    for (const id of ['room-1', ...players]) {
      const mine = ran.filter((r) => r.target === id);
      expect(mine.map((r) => r.seq)).toEqual(Array.from({ length: seq }, (_, i) => i));
      expect(mine.at(-1)?.node).toBe('server-b');
    }
    expect(await membersOf(client, 'room-1')).toEqual({ members: players, node: 'server-b' });
    for (const id of players) expect(await where(client, id)).toEqual({ spot: 'room-1', node: 'server-b' });
    expect(a.snapshot().objects?.activations).toEqual([]);
    expect(b.snapshot().objects?.activations).toContainEqual(
      expect.objectContaining({ kind: 'spot', id: 'room-1', members: players }),
    );
    expect(b.snapshot().objects?.activations).toContainEqual(
      expect.objectContaining({ kind: 'actor', id: 'p1', spot: 'room-1' }),
    );
    expect(
      b
        .snapshot()
        .objects?.activations.map((x) => x.id)
        .sort(),
    ).toEqual(['p1', 'p2', 'p3', 'room-1']);
    // Each has its own authority: toActor follows the Actor's record, toSpot the Spot's.
    for (const id of players)
      expect(await client.objects.resolve('actor', id)).toMatchObject({
        tag: 'ReadyRoute',
        owner: { rid: 'server-b' },
        authorityOwnerGeneration: 2,
      });
    expect(heard.filter((h) => h.startsWith('leave'))).toEqual([]);
  });

  it('a member that cannot follow its Spot stays a member apart, and its end still reaches the Spot', async () => {
    const { client } = await world();
    await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    for (const id of ['p1', 'stuck']) {
      await client.objects.createActor('player', id, { node: 'server-a' });
      await client.objects.join(id, 'room-1');
    }
    const result = await client.objects.relocate('room-1', { target: 'server-b' });
    expect(result).toMatchObject({ outcome: 'committed', owner: 'server-b' });
    expect(result.members).toEqual([
      { id: 'p1', owner: 'server-b', withSpot: true },
      { id: 'stuck', owner: 'server-a', withSpot: false },
    ]);
    expect(await where(client, 'stuck')).toEqual({ spot: 'room-1', node: 'server-a' });
    expect((await membersOf(client, 'room-1')).members).toEqual(['p1', 'stuck']);
    // Its end travels to the Spot by id, across nodes.
    const stuck = (await client.objects.resolve('actor', 'stuck')) as { objectGeneration: number };
    await client.objects.destroy({
      kind: 'actor',
      type: 'player',
      id: 'stuck',
      objectGeneration: stuck.objectGeneration,
      mesh: 'objects',
      rid: 'server-a',
    });
    await until(() => heard.includes('leave room-1 stuck destroyed'));
    expect((await membersOf(client, 'room-1')).members).toEqual(['p1']);
  });
});
