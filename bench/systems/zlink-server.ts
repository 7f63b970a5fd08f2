/**
 * ZLink ClientServer server: a Nest app serving channel `bench`; every handler runs through Nest's
 * pipeline. `echo` returns the payload, `ingest` (one-way) counts, `count` returns the count.
 */
import 'reflect-metadata';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ChannelHandler, ZLinkModule, ZLinkPayload, ZLinkRuntime } from '../../lib/index.js';
import { serverProcess } from './harness.js';

@Injectable()
class BenchHandlers {
  private ingested = 0;

  @ChannelHandler('bench', 'echo')
  echo(@ZLinkPayload() payload: unknown): unknown {
    return payload;
  }

  @ChannelHandler('bench', 'ingest', { kind: 'send' })
  ingest(@ZLinkPayload() _payload: unknown): void {
    this.ingested++;
  }

  @ChannelHandler('bench', 'count')
  async count(): Promise<number> {
    // Sends that arrived before this request have started; one turn lets their handlers finish.
    await nextTurn();
    return this.ingested;
  }
}

@Module({
  imports: [
    ZLinkModule.forRoot({ clientServer: { bench: { server: { listen: { bindHost: '127.0.0.1' } } } } }),
  ],
  providers: [BenchHandlers],
})
class ZLinkServerModule {}

serverProcess(async () => {
  const app = await NestFactory.createApplicationContext(ZLinkServerModule, { logger: false });
  const endpoint = app.get(ZLinkRuntime).endpoint('bench');
  if (!endpoint) throw new Error('the bench channel has no endpoint');
  return { endpoint, close: () => app.close() };
});
