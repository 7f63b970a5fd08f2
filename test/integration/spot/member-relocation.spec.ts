/**
 * A member Actor moves only beside its Spot (docs/objects.md#actors-in-spots), on three object servers
 * and a client over real sockets, with a real redis-server as the Location, Authority and Relocation
 * Store: relocating a member alone is refused with an error naming its Spot and the two ways to move
 * it; a join that would take a member of one Spot away to another is refused before anything moves; a
 * member left apart by a failed move is moved only back beside its Spot.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  ObjectClassRegistry,
  type ObjectClassDescription,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
  type ZLinkOptions,
  type ZLinkRuntime,
  isZLinkError,
} from '../../../lib/index.js';
import { RedisServer } from '../../helpers/redis-server.js';
import { objectClass, startRuntime, membersOf, where } from './harness.js';

/** Whether server-b refuses to restore the Actor 'stuck' (its member move then fails). */
let refuseStuckOnB = false;

class Room {
  members(_: unknown, ctx: ZLinkObjectContext): { members: readonly string[]; node: string } {
    return { members: ctx.membership.members(), node: ctx.self.rid };
  }
  capture(): unknown {
    return {};
  }
  restore(): void {}
}

class Player {
  where(_: unknown, ctx: ZLinkObjectContext): { spot: string | undefined; node: string } {
    return { spot: ctx.membership.spot, node: ctx.self.rid };
  }
  capture(): unknown {
    return {};
  }
  restore(_: unknown, ctx: ZLinkObjectScope): void {
    if (refuseStuckOnB && ctx.id === 'stuck' && ctx.self.rid === 'server-b') throw new Error('not on b');
  }
}

const relocatable = (c: ObjectClassDescription): ObjectClassDescription => ({
  ...c,
  options: { relocatable: true },
});
const classes = (): ObjectClassRegistry => {
  const r = new ObjectClassRegistry();
  r.register(relocatable(objectClass('spot', 'room', Room, ['members'])));
  r.register(relocatable(objectClass('actor', 'player', Player, ['where'])));
  return r;
};

const runtimes: ZLinkRuntime[] = [];
let redis: RedisServer | undefined;
afterEach(async () => {
  refuseStuckOnB = false;
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  await redis?.stop();
  redis = undefined;
});

async function world() {
  redis = await RedisServer.start();
  const url = redis.url;
  const options = (role: 'server' | 'client', rid: string): ZLinkOptions => ({
    locationStore: {
      redis: url,
      keyPrefix: 'members',
      lease: { ttlMs: 3000, refreshMs: 500, refreshTimeoutMs: 500, marginMs: 500 },
      fullReadIntervalMs: 500,
    },
    meshes: {
      objects: { rid, listen: { bindHost: '127.0.0.1', port: 0 }, objectRole: role, discovery: 'auto' },
    },
    ...(role === 'server' && { relocationStore: { redis: url, keyPrefix: 'members-moves' } }),
  });
  const start = async (role: 'server' | 'client', rid: string) => {
    const r = await startRuntime(options(role, rid), role === 'server' ? classes() : undefined);
    runtimes.push(r);
    return r;
  };
  const nodes = [
    await start('server', 'server-a'),
    await start('server', 'server-b'),
    await start('server', 'server-c'),
    await start('client', 'client-1'),
  ];
  for (const r of nodes) await r.waitForPeers('objects', 3);
  return nodes[3] as ZLinkRuntime;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error,
  );

describe('a member Actor moves only beside its Spot', () => {
  it('relocating a member alone is refused naming its Spot; the Spot keeps it and its own move takes it', async () => {
    const client = await world();
    await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    await client.objects.createActor('player', 'p1', { node: 'server-a' });
    await client.objects.join('p1', 'room-1');

    for (const target of ['server-b', undefined]) {
      const refused = await failure(client.objects.relocate({ kind: 'actor', id: 'p1' }, { target }));
      expect(isZLinkError(refused, 'InvalidOperation')).toBe(true);
      expect(refused).toMatchObject({ details: { reason: 'member', spot: 'room-1' } });
      const message = (refused as Error).message;
      expect(message).toContain("member of spot 'room-1'");
      expect(message).toContain("relocate spot 'room-1' instead (its members move with it)");
      expect(message).toContain('objects.leave');
    }
    expect(await where(client, 'p1')).toEqual({ spot: 'room-1', node: 'server-a' });
    expect(await membersOf(client, 'room-1')).toEqual({ members: ['p1'], node: 'server-a' });

    // The Spot's own move takes it; and once out of the Spot it moves alone.
    const moved = await client.objects.relocate('room-1', { target: 'server-b' });
    expect(moved.members).toEqual([{ id: 'p1', owner: 'server-b', withSpot: true }]);
    await client.objects.leave('p1');
    await expect(
      client.objects.relocate({ kind: 'actor', id: 'p1' }, { target: 'server-c' }),
    ).resolves.toMatchObject({ outcome: 'committed', owner: 'server-c' });
  });

  it('a join that would move a member of another Spot is refused alreadyMember before it moves', async () => {
    const client = await world();
    await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    await client.objects.createSpot('room', 'room-2', { node: 'server-b' });
    await client.objects.createActor('player', 'p1', { node: 'server-a' });
    await client.objects.join('p1', 'room-1');

    const refused = await failure(client.objects.join('p1', 'room-2'));
    expect(isZLinkError(refused, 'InvalidOperation')).toBe(true);
    expect(refused).toMatchObject({ details: { reason: 'alreadyMember', spot: 'room-1' } });
    expect(await where(client, 'p1')).toEqual({ spot: 'room-1', node: 'server-a' });
    expect((await membersOf(client, 'room-1')).members).toEqual(['p1']);
  });

  it('a member left apart moves only back to its Spot: with no target it goes there', async () => {
    const client = await world();
    await client.objects.createSpot('room', 'room-1', { node: 'server-a' });
    await client.objects.createActor('player', 'stuck', { node: 'server-a' });
    await client.objects.join('stuck', 'room-1');
    refuseStuckOnB = true;
    const moved = await client.objects.relocate('room-1', { target: 'server-b' });
    expect(moved.members).toEqual([{ id: 'stuck', owner: 'server-a', withSpot: false }]);
    refuseStuckOnB = false;

    const refused = await failure(
      client.objects.relocate({ kind: 'actor', id: 'stuck' }, { target: 'server-c' }),
    );
    expect(refused).toMatchObject({
      code: 'InvalidOperation',
      details: { reason: 'member', spot: 'room-1' },
    });
    expect((refused as Error).message).toContain("which runs on 'server-b'");
    expect(await where(client, 'stuck')).toEqual({ spot: 'room-1', node: 'server-a' });

    await expect(client.objects.relocate({ kind: 'actor', id: 'stuck' })).resolves.toMatchObject({
      outcome: 'committed',
      owner: 'server-b',
    });
    expect(await where(client, 'stuck')).toEqual({ spot: 'room-1', node: 'server-b' });
    expect(await membersOf(client, 'room-1')).toEqual({ members: ['stuck'], node: 'server-b' });
  });
});
