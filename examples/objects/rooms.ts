// Spots by global id in one file: an object server hosting `room` Spots and a gateway that only calls
// them, as two Nest apps on one mesh (in production, two processes). The gateway opens a room, players
// join and chat, a second room comes from the Instance intent, a room that does not exist is NotFound,
// then the rooms go. It prints what happened and exits. Without REDIS_URL both apps share an in-memory
// Location Store; with REDIS_URL=redis://host:6379 they use Redis, as separate processes would.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  MemoryLocationStore,
  Spot,
  SpotHandler,
  ZLinkContext,
  ZLinkModule,
  ZLinkObjects,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
  isZLinkError,
  type DeactivationReason,
  type LocationStoreOptions,
  type SpotRef,
  type ZLinkActivationContext,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
} from 'nestjs-zlink';

export interface Joined {
  room: string;
  topic: string;
  members: string[];
}

/** A singleton like any other: every room gets it by constructor injection. */
@Injectable()
export class ChatLog {
  readonly lines: string[] = [];
}

// One instance per room, built through Nest's DI when the room activates. Its handlers and timers run
// one at a time, so its fields need no locking.
@Spot('room')
export class RoomSpot {
  private readonly members = new Set<string>();
  private topic = '';

  constructor(private readonly log: ChatLog) {}

  @SpotHandler('join')
  join(@ZLinkPayload() body: { player: string }, @ZLinkContext() ctx: ZLinkObjectContext): Joined {
    this.members.add(body.player);
    return { room: ctx.id, topic: this.topic, members: [...this.members] };
  }

  // A one-way message: no reply; the sender's promise resolves once the message is queued.
  @SpotHandler('chat', { kind: 'send' })
  chat(
    @ZLinkPayload() line: { player: string; text: string },
    @ZLinkContext() ctx: ZLinkObjectContext,
  ): void {
    this.log.lines.push(`${ctx.id} <${line.player}> ${line.text} (${ctx.metadata.locale ?? '-'})`);
  }

  // An exception reaches the caller as RemoteError with this message.
  @SpotHandler('leave')
  leave(@ZLinkPayload() body: { player: string }): string[] {
    if (!this.members.delete(body.player)) throw new Error(`${body.player} is not in the room`);
    return [...this.members];
  }

  // The room's first turn; `ctx.init` is what the creating call passed.
  onActivate(ctx: ZLinkActivationContext): void {
    this.topic = (ctx.init as { topic?: string } | undefined)?.topic ?? 'no topic';
    // A timer callback runs as a turn of this room, never beside a handler, and ends with the room.
    ctx.timers.setInterval(() => {
      this.log.lines.push(`${ctx.id}: ${this.members.size} online`);
    }, 60000);
  }

  // reason: 'destroyed', 'shutdown', 'takenOver' or 'failed'.
  onDeactivate(ctx: ZLinkObjectScope, reason: DeactivationReason): void {
    this.log.lines.push(`${ctx.id}: closed (${reason})`);
  }
}

// Both apps use the same Location Store: the objects' authority records live there, and the two
// nodes find each other through it (discovery: 'auto').
const store: LocationStoreOptions = process.env.REDIS_URL
  ? { redis: process.env.REDIS_URL }
  : { instance: new MemoryLocationStore() };

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: store,
      meshes: {
        world: {
          rid: 'rooms-1',
          objectRole: 'server', // hosts the @Spot and @Actor classes of this app
          discovery: 'auto',
          listen: { bindHost: '127.0.0.1', port: 0 },
          objects: { routeCacheMaxAgeMs: 15000, messageFollowDurationMs: 30000, objectQueueLimit: 1024 },
        },
      },
    }),
  ],
  providers: [ChatLog, RoomSpot], // a Spot class is listed like any provider
})
export class RoomServerModule {}

@Injectable()
export class Lobby {
  constructor(
    private readonly objects: ZLinkObjects,
    private readonly route: ZLinkRouteClient,
  ) {}

  // Placed on an object server that hosts `room`; InvalidOperation if the id is taken already.
  open(room: string, topic: string): Promise<SpotRef> {
    return this.objects.createSpot('room', room, { init: { topic } });
  }

  // The room's ref when it exists, else the room is created first (placed as by open).
  ensure(room: string): Promise<SpotRef> {
    return this.objects.getOrCreateSpot('room', room, { init: { topic: 'open play' } });
  }

  // Ends the incarnation `ref` names: onDeactivate runs, then calls to the id end NotFound.
  close(ref: SpotRef): Promise<void> {
    return this.objects.destroy(ref);
  }

  // By global id only: the room's current owner runs `join` and replies.
  join(room: string, player: string): Promise<Joined> {
    return this.route.toSpot(room).request('join', { player }).async<Joined>({ timeoutMs: 2000 });
  }

  say(room: string, player: string, text: string): Promise<void> {
    return this.route.toSpot(room).send('chat', { player, text }).metadata('locale', 'en').async();
  }

  // Instance intent: a Missing room is created first (get-or-create), then joined.
  quickMatch(room: string, player: string): Promise<Joined> {
    return this.route
      .toSpot(room)
      .instance('room', { topic: 'quick match' })
      .request('join', { player })
      .async<Joined>();
  }

  leave(room: string, player: string): Promise<string[]> {
    return this.route.toSpot(room).request('leave', { player }).async<string[]>();
  }

  // A plain call never creates: a room that does not exist, or no longer does, ends NotFound.
  async joinIfOpen(room: string, player: string): Promise<Joined | undefined> {
    try {
      return await this.join(room, player);
    } catch (error) {
      if (isZLinkError(error, 'NotFound')) return undefined;
      throw error;
    }
  }
}

// The gateway (an HTTP or WebSocket front in a real system) hosts no objects; it only calls them.
@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: store,
      meshes: {
        world: {
          rid: 'gateway-1',
          objectRole: 'client',
          discovery: 'auto',
          listen: { bindHost: '127.0.0.1', port: 0 },
        },
      },
    }),
  ],
  providers: [Lobby],
})
export class GatewayModule {}

async function bootstrap(): Promise<void> {
  const server = await NestFactory.createApplicationContext(RoomServerModule, { logger: false });
  const gateway = await NestFactory.createApplicationContext(GatewayModule, { logger: false });
  const rooms = server.get(ZLinkRuntime);
  rooms.events.subscribe(
    (event) => {
      if (event.type === 'object')
        console.log(`${event.objectType} '${event.id}' ${event.state} ${event.reason ?? ''}`.trimEnd());
    },
    { perMessage: false },
  );
  // Until the gateway has seen an object server hosting `room`, createSpot ends NotFound.
  await gateway.get(ZLinkRuntime).waitForPeers('world', 1);
  const lobby = gateway.get(Lobby);

  const ref = await lobby.open('room-1', 'ranked');
  console.log(`opened ${ref.id} (generation ${ref.objectGeneration}) on ${ref.rid}`);
  console.log(
    `ensure gives the same ref: ${JSON.stringify(await lobby.ensure('room-1')) === JSON.stringify(ref)}`,
  );
  await lobby.join('room-1', 'ann');
  await lobby.say('room-1', 'ann', 'hi all');
  // Messages from one sender to one object run in order: this join runs after the chat above.
  console.log(`joined ${JSON.stringify(await lobby.join('room-1', 'bob'))}`);
  console.log(`joined ${JSON.stringify(await lobby.quickMatch('room-2', 'cid'))}`);
  console.log(`room-9: ${JSON.stringify((await lobby.joinIfOpen('room-9', 'dan')) ?? 'no such room')}`);
  await lobby.leave('room-1', 'eve').catch((error: unknown) => {
    if (!isZLinkError(error, 'RemoteError')) throw error;
    console.log(`leave: ${error.code} ${error.remote?.code}: ${error.remote?.message}`);
  });

  const objects = gateway.get(ZLinkObjects);
  console.log(`room-1 resolves ${(await objects.resolve('spot', 'room-1')).tag}`);
  await lobby.close(ref);
  console.log(`room-1 resolves ${(await objects.resolve('spot', 'room-1')).tag} after destroy`);

  for (const m of gateway.get(ZLinkRuntime).metrics().objects)
    console.log(
      `gateway → ${m.type}: ${m.requests} requests, ${m.sends} sends, failures ${JSON.stringify(m.failures)}`,
    );
  for (const m of rooms.metrics().objects)
    console.log(`rooms-1 ${m.type}: ${m.handled} handled, ${m.activations} activations`);
  const live = rooms.snapshot().objects?.activations ?? [];
  console.log(`live on rooms-1: ${live.map((a) => `${a.type} ${a.id} (${a.state})`).join(', ')}`);

  await gateway.close();
  await server.close(); // releases room-2: its onDeactivate runs with 'shutdown'
  for (const line of server.get(ChatLog).lines) console.log(line);
}

void bootstrap();
