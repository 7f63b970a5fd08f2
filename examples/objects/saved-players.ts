// Persistent Actors, in one file: a `player` Actor keeps its position in a State Store, written after
// every turn; its object server stops, another starts, and the player comes back where it was. In
// production the stores are Redis or PostgreSQL shared by separate processes; here two Nest apps share
// in-memory ones. It prints what happened and exits.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Actor,
  ActorHandler,
  MemoryLocationStore,
  MemoryStateStore,
  ZLinkContext,
  ZLinkModule,
  ZLinkObjects,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
  type ZLinkActivationContext,
  type ZLinkObjectContext,
} from 'nestjs-zlink';

// `persist`: what `capture()` returns is saved, and comes back through `restore()` wherever the player
// is activated next. In the default mode ('everyTurn') a turn's reply leaves only once its state is
// saved, so a player never hears of a move that a crash could undo.
@Actor('player', { persist: { store: 'players' } })
export class SavedPlayer {
  private x = 0;
  private badges: string[] = [];
  private shielded = false;

  onActivate(ctx: ZLinkActivationContext): void {
    const from = ctx.restored ? `restored from version ${ctx.restored.version}` : 'new';
    console.log(`${ctx.id} on ${ctx.self.rid}: ${from}, at x = ${this.x}`);
  }

  @ActorHandler('move')
  move(@ZLinkPayload() by: number): number {
    this.x += by;
    return this.x;
  }

  // A save on demand: it resolves once the store has the state (useful in mode 'explicit').
  @ActorHandler('badge')
  async badge(@ZLinkPayload() name: string, @ZLinkContext() ctx: ZLinkObjectContext): Promise<number> {
    this.badges.push(name);
    await ctx.state.save();
    return ctx.state.version;
  }

  // A durable timer: saved with the state, it fires wherever the player is when it comes due.
  @ActorHandler('shield')
  shield(@ZLinkContext() ctx: ZLinkObjectContext): boolean {
    this.shielded = true;
    ctx.timers.setTimeout(() => this.expire(), 30_000, 'expire', { durable: true });
    return this.shielded;
  }

  expire(): void {
    this.shielded = false;
  }

  @ActorHandler('shielded')
  isShielded(): boolean {
    return this.shielded;
  }

  capture(): { x: number; badges: string[]; shielded: boolean } {
    return { x: this.x, badges: this.badges, shielded: this.shielded };
  }

  restore(state: { x: number; badges: string[]; shielded: boolean }): void {
    this.x = state.x;
    this.badges = state.badges;
    this.shielded = state.shielded;
  }
}

const locationStore = { instance: new MemoryLocationStore() };
const stateStores = { players: { instance: new MemoryStateStore() } };

function server(rid: string) {
  return ZLinkModule.forRoot({
    locationStore,
    stateStores,
    meshes: {
      world: { rid, objectRole: 'server', discovery: 'auto', listen: { bindHost: '127.0.0.1', port: 0 } },
    },
  });
}

@Module({ imports: [server('game-1')], providers: [SavedPlayer] })
class FirstServerModule {}

@Module({ imports: [server('game-2')], providers: [SavedPlayer] })
class SecondServerModule {}

export async function main(): Promise<void> {
  const first = await NestFactory.createApplicationContext(FirstServerModule, { logger: false });
  await first.get(ZLinkObjects).getOrCreateActor('player', 'ann');
  const route = first.get(ZLinkRouteClient);
  for (const by of [3, 4, 5]) await route.toActor('ann').request('move', by).async();
  await route.toActor('ann').request('badge', 'explorer').async();
  await route.toActor('ann').request('shield', null).async();
  await first.close();

  const second = await NestFactory.createApplicationContext(SecondServerModule, { logger: false });
  await second.get(ZLinkRuntime).waitForPeers('world', 0);
  await second.get(ZLinkObjects).getOrCreateActor('player', 'ann');
  const x = await second.get(ZLinkRouteClient).toActor('ann').request('move', 0).async<number>();
  const shielded = await second.get(ZLinkRouteClient).toActor('ann').request('shielded', null).async();
  console.log(`ann after the restart: x = ${x}, shielded = ${String(shielded)}`);
  await second.close();
}

if (process.argv[1]?.endsWith('saved-players.js')) void main();
