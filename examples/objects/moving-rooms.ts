// Moving a live Spot between object servers, in one file: two Nest apps host `room` Spots and `player`
// Actors (in production, two processes), a player joins a room, and the room takes chat while it moves
// to the second app with its player, and nothing is lost or run twice. It prints what happened and exits. Without REDIS_URL the apps share
// in-memory stores; with REDIS_URL=redis://host:6379 they use Redis, as separate processes would.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Actor,
  ActorHandler,
  MemoryLocationStore,
  MemoryRelocationStore,
  Spot,
  SpotHandler,
  ZLinkContext,
  ZLinkModule,
  ZLinkObjects,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
  type ActorRef,
  type LocationStoreOptions,
  type MemberLeaveReason,
  type RelocationStoreOptions,
  type ZLinkActivationContext,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
} from 'nestjs-zlink';

// `relocatable: true`: the room may move. What it is travels as `capture()` returns it, into
// `restore(state, ctx)` on the new node, together with the messages waiting for it and its timers.
@Spot('room', { relocatable: true })
export class MovingRoom {
  private lines: string[] = [];
  private ticks = 0;
  private node = '';

  onActivate(ctx: ZLinkActivationContext): void {
    this.node = ctx.self.rid;
    // Labelled with one of the room's methods: this timer moves with the room and goes on there.
    ctx.timers.setInterval(() => this.tick(), 50, 'tick');
  }

  tick(): void {
    this.ticks++;
  }

  @SpotHandler('chat', { kind: 'send' })
  chat(@ZLinkPayload() text: string): void {
    this.lines.push(text);
  }

  @SpotHandler('state')
  state(): { node: string; lines: string[]; ticking: boolean } {
    return { node: this.node, lines: this.lines, ticking: this.ticks > 0 };
  }

  capture(): { lines: string[]; ticks: number } {
    return { lines: this.lines, ticks: this.ticks };
  }

  restore(state: { lines: string[]; ticks: number }, ctx: ZLinkObjectScope): void {
    this.lines = state.lines;
    this.ticks = state.ticks;
    this.node = ctx.self.rid;
  }

  // Players join and leave the room in its own turns; throwing here refuses the join.
  onActorJoin(ctx: ZLinkObjectScope, player: ActorRef): void {
    if (ctx.membership.members().length >= 8) throw new Error('the room is full');
    console.log(`${player.id} joined ${ctx.id}`);
  }

  onActorLeave(ctx: ZLinkObjectScope, playerId: string, reason: MemberLeaveReason): void {
    console.log(`${playerId} left ${ctx.id} (${reason})`);
  }
}

// A player: it joins a room on the room's node, and moves with the room from then on.
@Actor('player', { relocatable: true })
export class Player {
  @ActorHandler('where')
  where(@ZLinkContext() ctx: ZLinkObjectContext): { room: string | undefined; node: string } {
    return { room: ctx.membership.spot, node: ctx.self.rid };
  }
}

// The Relocation Store is registered on its own (it may share the Location Store's Redis, never its
// key prefix); every node that hosts a relocatable class needs it.
const store: LocationStoreOptions = process.env.REDIS_URL
  ? { redis: process.env.REDIS_URL }
  : { instance: new MemoryLocationStore() };
const relocationStore: RelocationStoreOptions = process.env.REDIS_URL
  ? { redis: process.env.REDIS_URL, keyPrefix: 'zlink-relocation' }
  : { instance: new MemoryRelocationStore() };

function roomServer(rid: string): object {
  @Module({
    imports: [
      ZLinkModule.forRoot({
        locationStore: store,
        relocationStore,
        meshes: {
          world: { rid, objectRole: 'server', discovery: 'auto', listen: { bindHost: '127.0.0.1', port: 0 } },
        },
      }),
    ],
    providers: [MovingRoom, Player],
  })
  class RoomServerModule {}
  return RoomServerModule;
}

async function bootstrap(): Promise<void> {
  const first = await NestFactory.createApplicationContext(roomServer('rooms-1'), { logger: false });
  const second = await NestFactory.createApplicationContext(roomServer('rooms-2'), { logger: false });
  await first.get(ZLinkRuntime).waitForPeers('world', 1);
  await second.get(ZLinkRuntime).waitForPeers('world', 1);
  const objects = first.get(ZLinkObjects);
  const route = first.get(ZLinkRouteClient);

  await objects.createSpot('room', 'room-1', { node: 'rooms-1' });
  // Ann lives on rooms-2; joining moves her to the room's node first.
  await objects.createActor('player', 'ann', { node: 'rooms-2' });
  await objects.join('ann', 'room-1');
  const say = (text: string) => route.toSpot('room-1').send('chat', text).async();
  await say('before the move');
  await new Promise((r) => setTimeout(r, 120)); // the timer ticks a few times on rooms-1
  // Messages sent while the room moves wait for it and run on the new node, in the order sent.
  const moving = objects.relocate('room-1', { target: 'rooms-2' });
  const during = [say('during the move 1'), say('during the move 2')];
  const moved = await moving;
  await Promise.all(during);
  console.log(moved.outcome === 'committed' ? `moved to ${moved.owner}` : `stayed: ${moved.reason}`);
  // Its players moved with it, each in a move of its own.
  for (const member of moved.members ?? []) console.log(`${member.id} is on ${member.owner}`);
  await say('after the move');
  console.log(JSON.stringify(await route.toSpot('room-1').request('state', null).async()));
  console.log(JSON.stringify(await route.toActor('ann').request('where', null).async()));
  await objects.leave('ann');

  await first.close();
  await second.close();
}

void bootstrap();
