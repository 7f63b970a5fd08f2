/**
 * RouteMesh through Nest (issue 4 §3, §4): `@NodeHandler` in a namespace per MeshName with
 * `meshName`/`sourceRid` in its context, `@ChannelHandler` on a mesh Server channel, the same
 * `ZLinkRouteClient` calls, guards applied — across two Nest application contexts.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  type INestApplicationContext,
  UseGuards,
} from '@nestjs/common';
import {
  ChannelHandler,
  NodeHandler,
  ZLinkContext,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRuntime,
  type ZLinkMessageContext,
  type ZLinkNodeMessageContext,
  type ZLinkOptions,
} from '../../../lib/index.js';
import { bootApp, rejectionOf } from './nest-app.js';

@Injectable()
class OnlyAdmins implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const ctx = context.switchToRpc().getContext<ZLinkNodeMessageContext>();
    return ctx.metadata.role === 'admin';
  }
}

@Injectable()
class GameNode {
  @NodeHandler('game', 'status')
  status(@ZLinkPayload() payload: { q: string }, @ZLinkContext() ctx: ZLinkNodeMessageContext) {
    return { q: payload.q, mesh: ctx.meshName, from: ctx.sourceRid };
  }

  @UseGuards(OnlyAdmins)
  @NodeHandler('game', 'shutdown')
  shutdown() {
    return 'ok';
  }

  // The same packet name in the channel namespace reaches a different handler (02 §6).
  @ChannelHandler('match', 'status')
  matchStatus(_payload: unknown, ctx: ZLinkMessageContext) {
    return `channel ${ctx.channelName}`;
  }
}

const apps: INestApplicationContext[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function boot(options: ZLinkOptions, providers: unknown[] = []): Promise<INestApplicationContext> {
  const app = await bootApp({ zlink: ZLinkModule.forRoot(options), providers: providers as never[] });
  apps.push(app);
  return app;
}

const listen = { bindHost: '127.0.0.1' };

describe('RouteMesh through Nest', () => {
  it('@NodeHandler and @ChannelHandler on a mesh serve calls from another Nest app; guards apply', async () => {
    const server = await boot(
      { meshes: { game: { rid: 'srv', listen, channels: { match: { role: 'server' } } } } },
      [GameNode, OnlyAdmins],
    );
    const endpoint = server.get(ZLinkRuntime).meshEndpoint('game') as string;
    const client = await boot({
      meshes: { game: { rid: 'cli', listen, peers: [endpoint], channels: { match: { role: 'client' } } } },
    });
    const runtime = client.get(ZLinkRuntime);
    await runtime.waitForCandidates('match', 1);
    const route = runtime.routeClient;
    expect(await route.requestToNode('game', 'srv', 'status', { q: 'x' }).async()).toEqual({
      q: 'x',
      mesh: 'game',
      from: 'cli',
    });
    expect(await route.requestToChannel('match', 'status', {}).async()).toBe('channel match');
    expect(await route.requestToNode('game', 'srv', 'shutdown', 0).metadata('role', 'admin').async()).toBe(
      'ok',
    );
    const refused = await rejectionOf(() => route.requestToNode('game', 'srv', 'shutdown', 0).async());
    expect(refused).toMatchObject({ code: 'RemoteError' });
  });

  it('a @NodeHandler for a MeshName this process does not join fails bootstrap with Configuration naming it', async () => {
    const error = await rejectionOf(() =>
      boot({ meshes: { other: { listen, channels: { match: { role: 'server' } } } } }, [
        GameNode,
        OnlyAdmins,
      ]),
    );
    expect(error).toMatchObject({ code: 'Configuration' });
    expect(String(error.message)).toContain('GameNode.status');
    expect(String(error.message)).toContain("MeshName 'game'");
  });
});
