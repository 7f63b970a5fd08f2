/**
 * ZLink ClientServer server: a Nest app serving channel `bench` (see `zlink-handlers.ts`); with the
 * argument `curve`, under CURVE (keys from BENCH_CURVE).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkModule, ZLinkRuntime } from '../../lib/index.js';
import { serverProcess } from './harness.js';
import { BENCH_CHANNEL, BenchHandlers, benchCurve } from './zlink-handlers.js';

const curve = benchCurve();

@Module({
  imports: [
    ZLinkModule.forRoot({
      clientServer: { [BENCH_CHANNEL]: { server: { listen: { bindHost: '127.0.0.1' } } } },
      // With CURVE (argument `curve`): its own pair, and the client's key admitted.
      ...(curve && { security: { curve: { ...curve.server, allow: [curve.client.publicKey] } } }),
    }),
  ],
  providers: [BenchHandlers],
})
class ZLinkServerModule {}

serverProcess(async () => {
  const app = await NestFactory.createApplicationContext(ZLinkServerModule, { logger: false });
  const endpoint = app.get(ZLinkRuntime).endpoint(BENCH_CHANNEL);
  if (!endpoint) throw new Error('the bench channel has no endpoint');
  return { endpoint, close: () => app.close() };
});
