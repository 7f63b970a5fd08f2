/**
 * An object server on mesh `rooms`: it hosts `@Spot('room')`, and for the players part the moving
 * `@Spot('arena')` and `@Actor('player')` (./arena.ts), and the `@Spot('lobby')` that hear the news
 * (./lobby-spot.ts). Rooms are created here by the gateway (getOrCreateSpot, or the Instance intent
 * of a first join), take `join` and `state` requests and `chat` sends, one turn at a time. It finds the other nodes through the
 * Location Store (ZLINK_DEMO_STORE, required: objects keep their records there). The demo asks it
 * for `{type:'stats'}` on stdin and reads one JSON line per answer on stdout.
 * Usage: node room-server.js <rid>
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Spot,
  SpotHandler,
  ZLinkContext,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRuntime,
  type DeactivationReason,
  type ZLinkActivationContext,
  type ZLinkObjectContext,
  type ZLinkObjectScope,
} from '../../lib/index.js';
import { exitWithParent } from '../exit-with-parent.js';
import { ArenaSpot, PlayerActor, sessionsEnded } from './arena.js';
import { LobbySpot, NEWS } from './lobby-spot.js';
import { type RoomState, roomsOptions } from './rooms-options.js';

const [rid = 'rooms-a'] = process.argv.slice(2);
const closed: Record<string, number> = {};

@Spot('room')
class RoomSpot {
  private readonly members = new Set<string>();
  private topic = '';
  private chats = 0;

  onActivate(ctx: ZLinkActivationContext): void {
    this.topic = (ctx.init as { topic?: string } | undefined)?.topic ?? 'open play';
  }

  onDeactivate(_ctx: ZLinkObjectScope, reason: DeactivationReason): void {
    closed[reason] = (closed[reason] ?? 0) + 1;
  }

  @SpotHandler('join')
  join(@ZLinkPayload() body: { player: string }, @ZLinkContext() ctx: ZLinkObjectContext): RoomState {
    this.members.add(body.player);
    return this.state(ctx);
  }

  @SpotHandler('chat', { kind: 'send' })
  chat(@ZLinkPayload() _line: { player: string; text: string }): void {
    this.chats++;
  }

  @SpotHandler('state')
  state(@ZLinkContext() ctx: ZLinkObjectContext): RoomState {
    return { room: ctx.id, server: rid, topic: this.topic, members: this.members.size, chats: this.chats };
  }
}

@Module({
  imports: [ZLinkModule.forRoot(roomsOptions(rid, 'server'))],
  providers: [RoomSpot, ArenaSpot, PlayerActor, LobbySpot],
})
class RoomServerModule {}

const app = await NestFactory.createApplicationContext(RoomServerModule, { logger: false });
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
exitWithParent(app);
const runtime = app.get(ZLinkRuntime);
const say = (message: object): void => void process.stdout.write(`${JSON.stringify(message)}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line) as { type: string };
  if (command.type !== 'stats') return say({ type: 'error', message: `unknown command ${line}` });
  const metrics = runtime.metrics();
  const room = metrics.objects.find((m) => m.kind === 'spot' && m.type === 'room');
  // Per topic of the news: published here, records sent for them, events that reached a lobby here.
  const news = Object.fromEntries(
    metrics.multicast
      .filter((m) => m.channel === NEWS)
      .map(({ topic, published, records, delivered }) => [topic, { published, records, delivered }]),
  );
  say({
    type: 'stats',
    rid,
    live: runtime.snapshot().objects?.activations.length ?? 0,
    handled: room?.handled ?? 0,
    activations: room?.activations ?? 0,
    deactivations: room?.deactivations ?? 0,
    closed,
    sessionsEnded,
    news,
  });
});
say({ type: 'ready', rid, endpoint: runtime.meshEndpoint('rooms') });
