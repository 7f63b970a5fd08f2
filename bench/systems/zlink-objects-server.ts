/**
 * ZLink object server: a Nest app whose object mesh (discovery 'auto' through a Redis Location
 * Store) hosts the Spot type `bench` and serves channel `bench` (a Server membership) with the same
 * three handlers, so a client compares the two on one pair of processes.
 * Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Spot, SpotHandler, ZLinkModule, ZLinkPayload, ZLinkRuntime } from '../../lib/index.js';
import { serverProcess } from './harness.js';
import { BENCH_CHANNEL, BenchHandlers } from './zlink-handlers.js';
import { BENCH_OBJECTS_MESH, BENCH_SPOT_TYPE, objectsLocationStore } from './zlink-objects.js';

/** `echo`, `ingest` and `count` as a Spot's handlers; the count is the process's, as on the channel. */
@Spot(BENCH_SPOT_TYPE)
class BenchSpot {
  constructor(private readonly handlers: BenchHandlers) {}

  @SpotHandler('echo')
  echo(@ZLinkPayload() payload: unknown): unknown {
    return payload;
  }

  @SpotHandler('ingest', { kind: 'send' })
  ingest(@ZLinkPayload() payload: unknown): void {
    this.handlers.ingest(payload);
  }

  @SpotHandler('count')
  count(): Promise<number> {
    return this.handlers.count();
  }
}

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: objectsLocationStore(),
      meshes: {
        [BENCH_OBJECTS_MESH]: {
          rid: 'bench-objects-server',
          objectRole: 'server',
          discovery: 'auto',
          listen: { bindHost: '127.0.0.1', port: 0 },
          channels: { [BENCH_CHANNEL]: { role: 'server' } },
        },
      },
    }),
  ],
  providers: [BenchHandlers, BenchSpot],
})
class ZLinkObjectsServerModule {}

serverProcess(async () => {
  const app = await NestFactory.createApplicationContext(ZLinkObjectsServerModule, { logger: false });
  const endpoint = app.get(ZLinkRuntime).meshEndpoint(BENCH_OBJECTS_MESH);
  if (!endpoint) throw new Error('the object mesh has no endpoint');
  return { endpoint, close: () => app.close() };
});
