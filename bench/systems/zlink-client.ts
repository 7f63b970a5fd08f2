/**
 * ZLink ClientServer client: a Nest application context with a Client of `bench`, calling through
 * `ZLinkRouteClient`. Usage: BENCH_ENDPOINT=tcp://... node zlink-client.js [curve]
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkModule, ZLinkRouteClient, ZLinkRuntime } from '../../lib/index.js';
import { benchEndpoint, clientProcess } from './harness.js';
import { benchCurve } from './zlink-handlers.js';

/** Generous: a count waits behind every send still queued. */
const COUNT_TIMEOUT_MS = 60_000;

const curve = benchCurve();

@Module({
  imports: [
    ZLinkModule.forRoot({
      clientServer: {
        bench: {
          client: {
            connect: [
              curve ? { endpoint: benchEndpoint(), publicKey: curve.server.publicKey } : benchEndpoint(),
            ],
          },
        },
      },
      ...(curve && { security: { curve: curve.client } }),
    }),
  ],
})
class ZLinkClientModule {}

clientProcess(async () => {
  const app = await NestFactory.createApplicationContext(ZLinkClientModule, { logger: false });
  await app.get(ZLinkRuntime).waitForCandidates('bench', 1);
  const route = app.get(ZLinkRouteClient);
  return {
    request: (payload) => route.requestToChannel('bench', 'echo', payload).async(),
    send: (payload) => route.sendToChannel('bench', 'ingest', payload).async(),
    count: () =>
      route.requestToChannel('bench', 'count', null).async<number>({ timeoutMs: COUNT_TIMEOUT_MS }),
    close: () => app.close(),
  };
});
