// Logical Multicast in one file: two object servers hosting `lobby` Spots that subscribe to the `news`
// channel, an `arena` Spot that publishes a milestone from its own handler, and a gateway that
// publishes a notice from outside any object — as three Nest apps on one mesh (in production, three
// processes). Every lobby, on either server, gets both events. It prints each lobby's board and exits.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  MemoryLocationStore,
  Spot,
  SpotHandler,
  SpotSubscribe,
  ZLinkContext,
  ZLinkModule,
  ZLinkObjects,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
  ZLinkSpotPublisher,
  type LocationStoreOptions,
  type ZLinkObjectContext,
} from 'nestjs-zlink';

// A lobby shows what happens elsewhere. Each subscription opens when a lobby activates and closes
// when it goes; its handler runs as a turn of the lobby, like any message to it.
@Spot('lobby')
export class LobbySpot {
  private readonly board: string[] = [];

  // Topic 'milestone' on channel 'news' (without a topic, the handler's packet name is the topic).
  @SpotSubscribe('news', 'milestone')
  @SpotHandler('milestone', { kind: 'send' })
  milestone(
    @ZLinkPayload() m: { player: string; wins: number },
    @ZLinkContext() ctx: ZLinkObjectContext,
  ): void {
    const from = ctx.multicast?.from;
    this.board.push(
      `${m.player} won ${m.wins} in ${from?.id ?? '?'} (published on ${ctx.multicast?.publisherRid})`,
    );
  }

  @SpotSubscribe('news', 'notice')
  @SpotHandler('notice', { kind: 'send' })
  notice(@ZLinkPayload() text: string): void {
    this.board.push(`notice: ${text}`);
  }

  @SpotHandler('board')
  read(): string[] {
    return this.board;
  }
}

// An arena publishes from its own turn: one record goes to each node whose lobbies subscribe.
@Spot('arena')
export class ArenaSpot {
  private readonly wins = new Map<string, number>();

  @SpotHandler('win')
  async win(
    @ZLinkPayload() body: { player: string },
    @ZLinkContext() ctx: ZLinkObjectContext,
  ): Promise<number> {
    const wins = (this.wins.get(body.player) ?? 0) + 1;
    this.wins.set(body.player, wins);
    await ctx.publish('news', 'milestone', { player: body.player, wins }).async();
    return wins;
  }
}

// The gateway hosts no objects; it publishes from outside any of them with ZLinkSpotPublisher.
@Injectable()
export class Announcer {
  constructor(private readonly publisher: ZLinkSpotPublisher) {}

  // Resolves once the event is handed to every node with a subscribed lobby: not a receipt.
  announce(text: string): Promise<void> {
    return this.publisher.publish('news', 'notice', text).async({ timeoutMs: 2000 });
  }
}

const store: LocationStoreOptions = { instance: new MemoryLocationStore() };

function node(rid: string, objectRole: 'server' | 'client') {
  return ZLinkModule.forRoot({
    locationStore: store,
    meshes: { world: { rid, objectRole, discovery: 'auto', listen: { bindHost: '127.0.0.1', port: 0 } } },
  });
}

@Module({ imports: [node('news-1', 'server')], providers: [LobbySpot, ArenaSpot] })
class FirstServerModule {}

@Module({ imports: [node('news-2', 'server')], providers: [LobbySpot, ArenaSpot] })
class SecondServerModule {}

@Module({ imports: [node('gateway-1', 'client')], providers: [Announcer] })
class GatewayModule {}

export async function main(): Promise<void> {
  const first = await NestFactory.createApplicationContext(FirstServerModule, { logger: false });
  const second = await NestFactory.createApplicationContext(SecondServerModule, { logger: false });
  const gateway = await NestFactory.createApplicationContext(GatewayModule, { logger: false });
  await gateway.get(ZLinkRuntime).waitForPeers('world', 2);
  await first.get(ZLinkRuntime).waitForPeers('world', 2);
  const objects = gateway.get(ZLinkObjects);
  const route = gateway.get(ZLinkRouteClient);
  await objects.createSpot('lobby', 'lobby-1', { node: 'news-1' });
  await objects.createSpot('lobby', 'lobby-2', { node: 'news-2' });
  await objects.createSpot('arena', 'arena-1', { node: 'news-1' });

  await route.toSpot('arena-1').request('win', { player: 'ann' }).async();
  await gateway.get(Announcer).announce('servers restart at 04:00');

  for (const lobby of ['lobby-1', 'lobby-2']) {
    // The events and this request come from different senders: wait until both have run.
    let board: string[] = [];
    for (let i = 0; i < 100 && board.length < 2; i++) {
      board = await route.toSpot(lobby).request('board', null).async<string[]>();
      if (board.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    console.log(`${lobby}: ${board.join(' | ')}`);
  }
  const [news] = first
    .get(ZLinkRuntime)
    .metrics()
    .multicast.filter((m) => m.topic === 'milestone');
  console.log(
    `news-1 milestone: ${news?.published} published, ${news?.records} record(s) sent, ${news?.delivered} delivered here`,
  );

  await gateway.close();
  await second.close();
  await first.close();
}

if (process.argv[1]?.endsWith('room-news.js')) void main();
