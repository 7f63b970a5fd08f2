/**
 * A game node on RouteMesh `game`. Every node answers Node direct `node.ping`; a `server` node also
 * serves ChannelName `match` (a `client` node only calls it). The demo drives it with one JSON
 * command per line on stdin and reads one JSON answer per line on stdout.
 * With a Location Store (ZLINK_DEMO_STORE) the nodes find each other there (discovery: 'auto') and
 * the peer endpoints are not used.
 * Usage: node game-node.js <rid> <server|client> [peer endpoint ...]
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ChannelHandler,
  NodeHandler,
  ZLinkContext,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
  type ZLinkNodeMessageContext,
} from '../../lib/index.js';
import { exitWithParent } from '../exit-with-parent.js';

const [rid = 'play-a', role = 'client', ...peers] = process.argv.slice(2);
const store = process.env.ZLINK_DEMO_STORE;

@Injectable()
class NodeCommands {
  // Node direct: the caller named this node; the context says who asked.
  @NodeHandler('game', 'node.ping')
  ping(@ZLinkContext() ctx: ZLinkNodeMessageContext) {
    return { node: rid, from: ctx.sourceRid };
  }
}

@Injectable()
class MatchRooms {
  // ChannelName select-one: every node that serves `match` is a candidate for the others.
  @ChannelHandler('match', 'match.join')
  join(@ZLinkPayload() req: { player: string }) {
    return { server: rid, player: req.player };
  }
}

@Module({
  imports: [
    ZLinkModule.forRoot({
      ...(store && { locationStore: { redis: store, keyPrefix: 'demo', fullReadIntervalMs: 1000 } }),
      meshes: {
        game: {
          rid,
          listen: { port: 0, bindHost: '127.0.0.1' },
          ...(store ? { discovery: 'auto' as const } : { peers }),
          channels: { match: { role: role === 'server' ? 'server' : 'client' } },
        },
      },
    }),
  ],
  providers: role === 'server' ? [NodeCommands, MatchRooms] : [NodeCommands],
})
class GameNodeModule {}

const app = await NestFactory.createApplicationContext(GameNodeModule, { logger: false });
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
exitWithParent(app);
const runtime = app.get(ZLinkRuntime);
const route = app.get(ZLinkRouteClient);
const say = (message: object): void => void process.stdout.write(`${JSON.stringify(message)}\n`);

async function tally(n: number, call: (i: number) => Promise<{ node?: string; server?: string }>) {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i += 100) {
    const replies = await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) => call(i + j)));
    for (const r of replies) {
      const who = r.node ?? r.server ?? '?';
      counts[who] = (counts[who] ?? 0) + 1;
    }
  }
  return counts;
}

/** Resolves once `match` has exactly `n` selectable candidates here, re-checking on every peer event. */
function candidatesEqual(n: number): Promise<void> {
  const count = () => runtime.snapshot().meshes[0]?.channels.find((c) => c.channel === 'match')?.candidates;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`'match' did not reach ${n} candidate(s) in 10 s`));
    }, 10000);
    const check = (): void => {
      if (count() !== n) return;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const unsubscribe = runtime.events.subscribe(check);
    check();
  });
}

type Command =
  | { type: 'wait'; candidates: number }
  | { type: 'ping'; to: string; n: number }
  | { type: 'join'; n: number }
  | { type: 'weight'; weight: number };

const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const command = JSON.parse(line) as Command;
  const run = async (): Promise<object> => {
    switch (command.type) {
      case 'wait':
        await candidatesEqual(command.candidates);
        return {};
      case 'ping':
        return {
          counts: await tally(command.n, () =>
            route.requestToNode('game', command.to, 'node.ping', {}).async(),
          ),
        };
      case 'join':
        return {
          counts: await tally(command.n, (i) =>
            route.requestToChannel('match', 'match.join', { player: `p${i}` }).async(),
          ),
        };
      case 'weight':
        runtime.setChannelWeight('match', command.weight);
        return {};
    }
  };
  run().then(
    (answer) => say({ type: command.type, ...answer }),
    (error: unknown) => say({ type: 'error', message: String((error as Error)?.message ?? error) }),
  );
});
say({ type: 'ready', rid, endpoint: runtime.meshEndpoint('game') });
