/**
 * ZLink RouteMesh server: a Nest app whose MeshNode serves channel `bench` (a Server membership)
 * and the same handlers as Node direct handlers (see `zlink-handlers.ts`).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkModule, ZLinkRuntime } from '../../lib/index.js';
import { serverProcess } from './harness.js';
import {
  BENCH_CHANNEL,
  BENCH_CLIENT_RID,
  BENCH_MESH,
  BENCH_SERVER_RID,
  BenchHandlers,
  BenchNodeHandlers,
  benchCurve,
} from './zlink-handlers.js';

const curve = benchCurve();

@Module({
  imports: [
    ZLinkModule.forRoot({
      // With CURVE: its own pair, and the client known by its key (it connects in).
      ...(curve && {
        security: {
          curve: { ...curve.server, allow: [{ rid: BENCH_CLIENT_RID, publicKey: curve.client.publicKey }] },
        },
      }),
      meshes: {
        [BENCH_MESH]: {
          rid: BENCH_SERVER_RID,
          listen: { bindHost: '127.0.0.1' },
          channels: { [BENCH_CHANNEL]: { role: 'server' } },
        },
      },
    }),
  ],
  providers: [BenchHandlers, BenchNodeHandlers],
})
class ZLinkMeshServerModule {}

serverProcess(async () => {
  const app = await NestFactory.createApplicationContext(ZLinkMeshServerModule, { logger: false });
  const endpoint = app.get(ZLinkRuntime).meshEndpoint(BENCH_MESH);
  if (!endpoint) throw new Error('the bench mesh has no endpoint');
  return { endpoint, close: () => app.close() };
});
