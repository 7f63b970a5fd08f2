/**
 * The object server of the sessions bench (bench/sessions.ts): hosts `bench-player` Actors, whose
 * `echo` answers its payload and `tap` counts. Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Actor, ActorHandler, ZLinkModule, ZLinkPayload, ZLinkRuntime } from '../../lib/index.js';
import { serverProcess } from './harness.js';
import { BENCH_OBJECTS_MESH, objectsLocationStore } from './zlink-objects.js';
import { BENCH_PLAYER_TYPE } from './zlink-sessions.js';

@Actor(BENCH_PLAYER_TYPE)
class BenchPlayer {
  taps = 0;

  @ActorHandler('echo')
  echo(@ZLinkPayload() payload: unknown): unknown {
    return payload;
  }

  @ActorHandler('tap', { kind: 'send' })
  tap(): void {
    this.taps++;
  }

  @ActorHandler('taps')
  count(): number {
    return this.taps;
  }
}

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: objectsLocationStore(),
      meshes: {
        [BENCH_OBJECTS_MESH]: {
          rid: 'bench-players-server',
          objectRole: 'server',
          discovery: 'auto',
          listen: { bindHost: '127.0.0.1', port: 0 },
        },
      },
    }),
  ],
  providers: [BenchPlayer],
})
class ZLinkSessionsServerModule {}

serverProcess(async () => {
  const app = await NestFactory.createApplicationContext(ZLinkSessionsServerModule, { logger: false });
  const endpoint = app.get(ZLinkRuntime).meshEndpoint(BENCH_OBJECTS_MESH);
  if (!endpoint) throw new Error('the object mesh has no endpoint');
  return { endpoint, close: () => app.close() };
});
