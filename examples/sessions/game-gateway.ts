// Players over plain TCP, in one file: a gateway that owns the players' connections (a session
// listener) and an object server that owns their `player` Actors, as two Nest apps on one mesh (in
// production, two processes). A player connects with the Node session client, logs in (the gateway
// binds the session to its Actor and seats it at a table), moves (relayed to the Actor, which answers
// and pushes), has a card dealt (the table pushes to every seated player at once), and leaves (the
// Actor hears it). It prints what happened and exits. Without REDIS_URL both apps share an
// in-memory Location Store; with REDIS_URL=redis://host:6379 they use Redis, as separate processes would.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Actor,
  ActorHandler,
  MemoryLocationStore,
  MemoryRelocationStore,
  OnSessionClose,
  OnSessionDropped,
  OnSessionOpen,
  OnSessionResumed,
  SessionHandler,
  Spot,
  SpotHandler,
  ZLinkContext,
  ZLinkModule,
  ZLinkObjects,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
  ZLinkSession,
  type LocationStoreOptions,
  type RelocationStoreOptions,
  type SessionCloseReason,
  type SessionDropReason,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
  type ZLinkSessionHello,
  type ZLinkSessionRef,
} from 'nestjs-zlink';
import { ZLinkSessionClient } from 'nestjs-zlink/session-client';

// One Actor per player, on an object server. A message from the player's session is an ordinary
// handler call; `ctx.session` says which session sent it, `ctx.push` answers the client directly.
@Actor('player', { relocatable: true })
export class PlayerActor {
  private x = 0;

  @ActorHandler('move')
  move(@ZLinkPayload() step: { dx: number }, @ZLinkContext() ctx: ZLinkObjectContext): { x: number } {
    this.x += step.dx;
    ctx.push('moved', { player: ctx.id, x: this.x });
    return { x: this.x };
  }

  // The session ended (the player left, the gateway closed it, or the gateway was lost).
  onSessionClosed(ctx: ZLinkObjectScope, session: ZLinkSessionRef, reason: string): void {
    console.log(`${ctx.id}: session ${session.id} ended (${reason})`);
  }

  // The player's connection dropped; its session waits on the gateway for it to come back (resume).
  onSessionDropped(ctx: ZLinkObjectScope, session: ZLinkSessionRef, reason: string): void {
    console.log(`${ctx.id}: session ${session.id} dropped (${reason}), its pushes are kept`);
  }

  // It came back on a new connection: the same session, still bound, and nothing it was sent is lost.
  onSessionResumed(ctx: ZLinkObjectScope, session: ZLinkSessionRef): void {
    console.log(`${ctx.id}: session ${session.id} resumed`);
  }

  // A player moves with its Actor's state; its connection stays where it is.
  capture(): { x: number } {
    return { x: this.x };
  }

  restore(state: { x: number }): void {
    this.x = state.x;
  }
}

// A table the players sit at (a Spot; its seated players are its member Actors, on its node). One
// `ctx.push` reaches every session bound to a member, one record per gateway; it returns how many
// sessions it was handed to (0: nobody seated has a session).
@Spot('table')
export class TableSpot {
  @SpotHandler('deal')
  deal(@ZLinkPayload() card: string, @ZLinkContext() ctx: ZLinkObjectContext): number {
    return ctx.push('dealt', { card });
  }
}

// On the gateway: what the Session owner does itself. Frames without a handler here go to the bound
// Actor.
@Injectable()
export class Lobby {
  constructor(
    private readonly objects: ZLinkObjects,
    private readonly route: ZLinkRouteClient,
  ) {}

  @OnSessionOpen('players')
  open(_session: ZLinkSession, hello: ZLinkSessionHello): boolean {
    return typeof hello.token === 'string' && hello.token.startsWith('ticket:');
  }

  @SessionHandler('players', 'login')
  async login(
    @ZLinkPayload() body: { name: string },
    @ZLinkSession() session: ZLinkSession,
  ): Promise<string> {
    const player = await this.objects.getOrCreateActor('player', body.name);
    await session.bind(player);
    await this.objects.getOrCreateSpot('table', 'table-1');
    await this.objects.join(player, 'table-1');
    session.data.name = body.name;
    return `welcome, ${body.name}`;
  }

  @SessionHandler('players', 'deal')
  deal(@ZLinkPayload() card: string): Promise<number> {
    return this.route.toSpot('table-1').request('deal', card).async<number>();
  }

  @OnSessionClose('players')
  close(session: ZLinkSession, reason: SessionCloseReason): void {
    console.log(`gateway: ${String(session.data.name)} left (${reason})`);
  }

  // A client that asked for resume lost its connection: its seat is kept for `resumeGraceMs`.
  @OnSessionDropped('players')
  dropped(session: ZLinkSession, reason: SessionDropReason): void {
    console.log(`gateway: ${String(session.data.name)} dropped (${reason}), waiting for a resume`);
  }

  // It resumed: `session.data` and the bindings are as they were.
  @OnSessionResumed('players')
  resumed(session: ZLinkSession): void {
    console.log(`gateway: ${String(session.data.name)} is back`);
  }
}

// Both apps find each other through the Location Store: Redis with REDIS_URL, else one in memory
// that they share (they run in one process here).
const shared = new MemoryLocationStore();
function locationStore(): LocationStoreOptions {
  const url = process.env.REDIS_URL;
  return url ? { redis: url } : { instance: shared };
}
// Where moves of relocatable objects are recorded (beside the Location Store, its own prefix).
const moves: RelocationStoreOptions = process.env.REDIS_URL
  ? { redis: process.env.REDIS_URL, keyPrefix: 'game-moves' }
  : { instance: new MemoryRelocationStore(), keyPrefix: 'game-moves' };

function objectServer() {
  @Module({
    imports: [
      ZLinkModule.forRoot({
        locationStore: locationStore(),
        relocationStore: moves,
        meshes: { world: { objectRole: 'server', discovery: 'auto', listen: { bindHost: '127.0.0.1' } } },
      }),
    ],
    providers: [PlayerActor, TableSpot],
  })
  class ObjectServerModule {}
  return NestFactory.createApplicationContext(ObjectServerModule, { logger: false });
}

function gateway() {
  @Module({
    imports: [
      ZLinkModule.forRoot({
        locationStore: locationStore(),
        meshes: { world: { objectRole: 'client', discovery: 'auto', listen: { bindHost: '127.0.0.1' } } },
        // Game clients connect here (port 0: a free port; `runtime.sessions.endpoint('players')` says which).
        sessions: { players: { mesh: 'world', listen: { bindHost: '127.0.0.1', port: 0 } } },
      }),
    ],
    providers: [Lobby],
  })
  class GatewayModule {}
  return NestFactory.createApplicationContext(GatewayModule, { logger: false });
}

// A game client: any language can speak the session wire; this is the Node client. `endpoint` is the
// listener's, as the gateway gives it: `runtime.sessions.endpoint('players')`, `tcp://host:port`.
export async function player(endpoint: string): Promise<void> {
  const client = new ZLinkSessionClient({ endpoint, token: 'ticket:ada' });
  client.on('push', (packet: string, msg: unknown) => console.log(`client: push ${packet}`, msg));
  await client.connect();
  console.log(`client: ${await client.request<string>('login', { name: 'ada' })}`);
  console.log('client: move ->', await client.request('move', { dx: 3 }));
  console.log('client: deal ->', await client.request('deal', 'ace'));
  await client.close();
}

export async function main(): Promise<void> {
  const server = await objectServer();
  const front = await gateway();
  const runtime = front.get(ZLinkRuntime);
  await runtime.waitForPeers('world', 1);
  await player(runtime.sessions.endpoint('players') as string);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await front.close();
  await server.close();
}

if (process.argv[1]?.endsWith('game-gateway.js')) void main();
