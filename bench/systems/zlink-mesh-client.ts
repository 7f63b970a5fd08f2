/**
 * ZLink RouteMesh client: a MeshNode that peers with the bench server and calls it either by
 * ChannelName select-one (`channel`) or by Node direct (`node`).
 * Usage: BENCH_ENDPOINT=tcp://... node zlink-mesh-client.js channel|node
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkModule, ZLinkRouteClient, ZLinkRuntime } from '../../lib/index.js';
import { benchEndpoint, clientProcess } from './harness.js';
import {
  BENCH_CHANNEL,
  BENCH_CLIENT_RID,
  BENCH_MESH,
  BENCH_SERVER_RID,
  benchCurve,
} from './zlink-handlers.js';

/** Generous: a count waits behind every send still queued. */
const COUNT_TIMEOUT_MS = 60_000;
const mode = process.argv[2] === 'node' ? 'node' : 'channel';
const curve = benchCurve();

@Module({
  imports: [
    ZLinkModule.forRoot({
      ...(curve && { security: { curve: curve.client } }),
      meshes: {
        [BENCH_MESH]: {
          rid: BENCH_CLIENT_RID,
          listen: { bindHost: '127.0.0.1' },
          peers: [
            {
              endpoint: benchEndpoint(),
              rid: BENCH_SERVER_RID,
              ...(curve && { publicKey: curve.server.publicKey }),
            },
          ],
          channels: { [BENCH_CHANNEL]: { role: 'client' } },
        },
      },
    }),
  ],
})
class ZLinkMeshClientModule {}

clientProcess(async () => {
  const app = await NestFactory.createApplicationContext(ZLinkMeshClientModule, { logger: false });
  await app.get(ZLinkRuntime).waitForCandidates(BENCH_CHANNEL, 1);
  const route = app.get(ZLinkRouteClient);
  const count = { timeoutMs: COUNT_TIMEOUT_MS };
  if (mode === 'node') {
    return {
      request: (payload) => route.requestToNode(BENCH_MESH, BENCH_SERVER_RID, 'echo', payload).async(),
      send: (payload) => route.sendToNode(BENCH_MESH, BENCH_SERVER_RID, 'ingest', payload).async(),
      count: () => route.requestToNode(BENCH_MESH, BENCH_SERVER_RID, 'count', null).async<number>(count),
      close: () => app.close(),
    };
  }
  return {
    request: (payload) => route.requestToChannel(BENCH_CHANNEL, 'echo', payload).async(),
    send: (payload) => route.sendToChannel(BENCH_CHANNEL, 'ingest', payload).async(),
    count: () => route.requestToChannel(BENCH_CHANNEL, 'count', null).async<number>(count),
    close: () => app.close(),
  };
});
