/**
 * One process of the Logical Multicast bench (bench/multicast.ts): `--role server --index I` is an
 * object server `mc-<I>` hosting Spot type `mc-lobby`, whose one handler counts the events it runs
 * (the process's count, when the last one ran and how many it refused, on `{type:'count'}`); the Spot subscribes to topic `n<N>` for every N in
 * MULTICAST_NODES with I < N, so a publish on `n<N>` reaches exactly the first N servers.
 * `--role publisher` is an object client that creates the Spots (`{type:'create'}`) and, on
 * `{type:'run', topic, ms | count}`, publishes the bench payload as fast as it can, in bursts of 1000 handed
 * over together, and reports how many. Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Spot,
  SpotHandler,
  SpotSubscribe,
  ZLinkModule,
  ZLinkObjects,
  ZLinkRuntime,
  ZLinkSpotPublisher,
} from '../../lib/index.js';
import { PAYLOAD } from '../workload/payload.js';
import { emit, fail, onCommands } from '../workload/protocol.js';
import { objectsLocationStore } from './zlink-objects.js';

export const MULTICAST_MESH = 'bench-multicast';
/** The audiences the bench measures a publish to: 1, 2, 3, 4 and 8 nodes. */
export const MULTICAST_NODES = [1, 2, 3, 4, 8] as const;
const BURST = 1000;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const role = arg('--role');
const index = Number(arg('--index') ?? 0);
let handled = 0;
/** When the last event ran here (the wall clock, which the bench's processes share). */
let lastAt = 0;

@Spot('mc-lobby')
class LobbySpot {
  @SpotHandler('tick', { kind: 'send' })
  tick(): void {
    handled++;
    lastAt = Date.now();
  }
}
// The topics of this server's index, declared on the one handler (a decorator call per topic).
const descriptor = Object.getOwnPropertyDescriptor(LobbySpot.prototype, 'tick') as PropertyDescriptor;
for (const n of MULTICAST_NODES)
  if (index < n) SpotSubscribe('bench', `n${n}`)(LobbySpot.prototype, 'tick', descriptor);

const mesh = (rid: string, objectRole: 'server' | 'client') =>
  ZLinkModule.forRoot({
    locationStore: objectsLocationStore(),
    meshes: {
      [MULTICAST_MESH]: { rid, objectRole, discovery: 'auto', listen: { bindHost: '127.0.0.1', port: 0 } },
    },
  });

@Module({ imports: [mesh(`mc-${index}`, 'server')], providers: [LobbySpot] })
class ServerModule {}

@Module({ imports: [mesh('mc-publisher', 'client')] })
class PublisherModule {}

async function main(): Promise<void> {
  const server = role === 'server';
  const app = await NestFactory.createApplicationContext(server ? ServerModule : PublisherModule, {
    logger: false,
  });
  const runtime = app.get(ZLinkRuntime);
  onCommands(
    async (command) => {
      switch (command.type) {
        case 'peers':
          await runtime.waitForPeers(MULTICAST_MESH, command.count as number, 60000);
          return emit({ type: 'peers' });
        case 'count': {
          // Events this node did not run: a full Spot queue refused them, or no subscriber was left.
          let lost = 0;
          for (const m of runtime.metrics().multicast)
            lost += m.dropped + Object.values(m.refused).reduce((a, b) => a + b, 0);
          return emit({ type: 'count', count: handled, lastAt, lost });
        }
        case 'create': {
          // Spots `from` .. `perServer - 1` on each of the first `servers` servers.
          const objects = app.get(ZLinkObjects);
          const made: Promise<unknown>[] = [];
          for (let s = 0; s < (command.servers as number); s++)
            for (let i = (command.from as number) ?? 0; i < (command.perServer as number); i++)
              made.push(objects.createSpot('mc-lobby', `mc-${s}-${i}`, { node: `mc-${s}` }));
          await Promise.all(made);
          return emit({ type: 'created' });
        }
        case 'run': {
          const publisher = app.get(ZLinkSpotPublisher);
          const topic = command.topic as string;
          // For `ms`, or `count` publishes (rounded up to a burst).
          const count = command.count as number | undefined;
          const started = performance.now();
          const end = started + ((command.ms as number | undefined) ?? Infinity);
          let published = 0;
          while (count === undefined ? performance.now() < end : published < count) {
            const calls: Promise<void>[] = [];
            for (let i = 0; i < BURST; i++)
              calls.push(publisher.publish('bench', 'tick', PAYLOAD, { topic }).async({ timeoutMs: 30000 }));
            await Promise.all(calls);
            published += BURST;
            await new Promise((r) => setImmediate(r));
          }
          return emit({ type: 'done', published, elapsedMs: performance.now() - started });
        }
        case 'shutdown':
          return;
        default:
          throw new Error(`unknown command ${command.type}`);
      }
    },
    () => app.close(),
  );
  emit({ type: 'ready' });
}

main().catch(fail);
