/**
 * RouteMesh through Nest (issue 4 items 3, 4): `@NodeHandler` in a namespace per MeshName with
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
  type ZLinkTargetKind,
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

  // The same packet name in the channel namespace reaches a different handler (docs/protocol.md#handler-scopes-and-context).
  @ChannelHandler('match', 'status')
  matchStatus(_payload: unknown, ctx: ZLinkMessageContext) {
    return `channel ${ctx.channelName}`;
  }
}

const seen: { handler: string; target: ZLinkTargetKind }[] = [];

@Injectable()
class Targets {
  @ChannelHandler('billing', 'where')
  billing(_payload: unknown, @ZLinkContext() ctx: ZLinkMessageContext): string {
    seen.push({ handler: 'billing', target: ctx.target });
    return ctx.target;
  }

  @ChannelHandler('match', 'where')
  match(_payload: unknown, @ZLinkContext() ctx: ZLinkMessageContext): string {
    seen.push({ handler: 'match', target: ctx.target });
    return ctx.target;
  }

  @NodeHandler('game', 'where')
  node(_payload: unknown, @ZLinkContext() ctx: ZLinkNodeMessageContext): string {
    seen.push({ handler: 'node', target: ctx.target });
    return ctx.target;
  }
}

const apps: INestApplicationContext[] = [];
afterEach(async () => {
  seen.length = 0;
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

  it("ClientServer and mesh channel handlers see target 'channel'; a Node direct handler sees 'node'", async () => {
    const server = await boot(
      {
        clientServer: { billing: { server: { listen }, client: {} } },
        meshes: { game: { rid: 'srv', listen, channels: { match: { role: 'server' } } } },
        requestTimeoutMs: 5000,
      },
      [Targets],
    );
    const serverRuntime = server.get(ZLinkRuntime);
    const endpoint = serverRuntime.meshEndpoint('game') as string;
    const client = await boot({
      meshes: { game: { rid: 'cli', listen, peers: [endpoint], channels: { match: { role: 'client' } } } },
      requestTimeoutMs: 5000,
    });
    const runtime = client.get(ZLinkRuntime);
    await runtime.waitForCandidates('match', 1);

    expect(await serverRuntime.routeClient.requestToChannel('billing', 'where', {}).async()).toBe('channel');
    expect(await runtime.routeClient.requestToChannel('match', 'where', {}).async()).toBe('channel');
    expect(await runtime.routeClient.requestToNode('game', 'srv', 'where', {}).async()).toBe('node');
    expect(seen).toEqual([
      { handler: 'billing', target: 'channel' },
      { handler: 'match', target: 'channel' },
      { handler: 'node', target: 'node' },
    ]);
  });
});
