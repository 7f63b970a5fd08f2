/**
 * Spots and Actors run inside Nest (issue 16 item 1): one instance per activation built through DI,
 * handlers through Nest's pipeline (a guard and a pipe here), onActivate / onDeactivate, ctx.timers
 * as turns, one turn at a time, a full queue refused `Rejected`, a request to itself `InvalidOperation`.
 * One process, its object calls reaching its own MeshNode's objects through the object layer.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  type INestApplicationContext,
  type PipeTransform,
  UseGuards,
  UsePipes,
} from '@nestjs/common';
import {
  Actor,
  ActorHandler,
  MemoryLocationStore,
  Spot,
  SpotHandler,
  ZLinkModule,
  ZLinkObjects,
  type ZLinkObjectContext,
  ZLinkRouteClient,
  ZLinkPayload,
  ZLinkContext,
} from '../../../lib/index.js';
import { bootApp } from './nest-app.js';

@Injectable()
class Ledger {
  readonly lines: string[] = [];
}

@Injectable()
class NoBannedGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const payload = context.switchToRpc().getData<{ who?: string }>();
    return payload?.who !== 'banned';
  }
}

@Injectable()
class UpperPipe implements PipeTransform {
  transform(value: unknown): unknown {
    return typeof value === 'string' ? value.toUpperCase() : value;
  }
}

let inside = 0;
let overlap = 0;

@Spot('room')
class RoomSpot {
  static built = 0;
  private readonly members: string[] = [];
  private ticks = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly route: ZLinkRouteClient,
  ) {
    RoomSpot.built++;
  }

  onActivate(ctx: { id: string; init: unknown; timers: ZLinkObjectContext['timers'] }): void {
    this.ledger.lines.push(`activate ${ctx.id} ${JSON.stringify(ctx.init)}`);
    ctx.timers.setInterval(() => {
      this.ticks++;
    }, 5);
  }

  onDeactivate(ctx: { id: string }, reason: string): void {
    this.ledger.lines.push(`deactivate ${ctx.id} ${reason}`);
  }

  @UseGuards(NoBannedGuard)
  @SpotHandler('join')
  async join(
    @ZLinkPayload() body: { who: string },
    @ZLinkContext() ctx: ZLinkObjectContext,
  ): Promise<string[]> {
    inside++;
    if (inside > 1) overlap++;
    await new Promise((r) => setTimeout(r, 1));
    this.members.push(body.who);
    inside--;
    return [...this.members, `${ctx.target}:${ctx.id}`];
  }

  @UsePipes(UpperPipe)
  @SpotHandler('shout')
  shout(@ZLinkPayload() text: string): string {
    return text;
  }

  @SpotHandler('ticks')
  tickCount(): number {
    return this.ticks;
  }

  @SpotHandler('slow')
  async slow(): Promise<void> {
    await new Promise((r) => setTimeout(r, 200));
  }

  @SpotHandler('self')
  async self(@ZLinkContext() ctx: ZLinkObjectContext): Promise<unknown> {
    return this.route.toSpot(ctx.id).request('shout', 'x').async();
  }
}

@Actor('player')
class PlayerActor {
  @ActorHandler('hp')
  hp(): number {
    return 100;
  }
}

let app: INestApplicationContext | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function boot(objectQueueLimit = 1024): Promise<INestApplicationContext> {
  app = await bootApp({
    zlink: ZLinkModule.forRoot({
      requestTimeoutMs: 5000,
      locationStore: { instance: new MemoryLocationStore() },
      meshes: {
        game: { objectRole: 'server', listen: { bindHost: '127.0.0.1' }, objects: { objectQueueLimit } },
      },
    }),
    providers: [Ledger, RoomSpot, PlayerActor, NoBannedGuard, UpperPipe],
  });
  return app;
}

describe('Spots and Actors in Nest', () => {
  it('builds one instance per activation through DI and runs handlers through the pipeline, one turn at a time', async () => {
    const ctx = await boot();
    const objects = ctx.get(ZLinkObjects);
    const route = ctx.get(ZLinkRouteClient);
    const ledger = ctx.get(Ledger);
    const built = RoomSpot.built;
    await objects.createSpot('room', 'r1', { init: { size: 4 } });
    await objects.createSpot('room', 'r2');
    expect(RoomSpot.built - built).toBe(2);
    expect(ledger.lines).toEqual(['activate r1 {"size":4}', 'activate r2 undefined']);

    const joins = await Promise.all(
      ['a', 'b', 'c', 'd'].map((who) => route.toSpot('r1').request('join', { who }).async<string[]>()),
    );
    expect(overlap).toBe(0);
    expect(joins[3]).toEqual(['a', 'b', 'c', 'd', 'spot:r1']);
    await expect(route.toSpot('r1').request('join', { who: 'banned' }).async()).rejects.toMatchObject({
      code: 'RemoteError',
    });
    expect(await route.toSpot('r1').request('shout', 'hey').async()).toBe('HEY');
    await new Promise((r) => setTimeout(r, 60));
    expect(await route.toSpot('r1').request('ticks', null).async<number>()).toBeGreaterThan(2);

    const player = await objects.createActor('player', 'p1');
    expect(await route.toActor('p1').request('hp', null).async()).toBe(100);
    await expect(route.toSpot('p1').request('hp', null).async()).rejects.toMatchObject({ code: 'NotFound' });

    await objects.destroy(player);
    await ctx.close();
    app = undefined;
    expect(ledger.lines).toContain('deactivate r1 shutdown');
    expect(ledger.lines).toContain('deactivate r2 shutdown');
  });

  it('refuses a full object queue with Rejected and a request to itself with InvalidOperation', async () => {
    const ctx = await boot(2);
    const objects = ctx.get(ZLinkObjects);
    const route = ctx.get(ZLinkRouteClient);
    await objects.createSpot('room', 'q');
    // The first runs (its permit was free), two wait in the queue, so a fourth finds it full.
    const slow = [0, 1, 2].map(() => route.toSpot('q').request('slow', null).async());
    await expect(route.toSpot('q').request('slow', null).async()).rejects.toMatchObject({ code: 'Rejected' });
    await Promise.all(slow);

    await objects.createSpot('room', 'me');
    const self = route.toSpot('me').request('self', null).async();
    await expect(self).rejects.toMatchObject({ code: 'RemoteError' });
    const error = (await self.catch((e: unknown) => e)) as { remote?: { code: string } };
    expect(error.remote?.code).toBe('InvalidOperation');
  });
});
