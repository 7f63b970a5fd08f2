/**
 * NestJS TCP transport server: `echo` (message), `ingest` (event, counted), `count` (message).
 * Binds 127.0.0.1 port 0 (Nest 12 passes port 0 through to `net.Server.listen`) and reads the
 * bound port back from the underlying server (`app.unwrap()`).
 */
import 'reflect-metadata';
import type { AddressInfo, Server } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  EventPattern,
  type MicroserviceOptions,
  MessagePattern,
  Payload,
  Transport,
} from '@nestjs/microservices';
import { serverProcess } from './harness.js';

@Controller()
class BenchController {
  private ingested = 0;

  @MessagePattern('echo')
  echo(@Payload() payload: unknown): unknown {
    return payload;
  }

  @EventPattern('ingest')
  ingest(@Payload() _payload: unknown): void {
    this.ingested++;
  }

  @MessagePattern('count')
  async count(): Promise<number> {
    // Events that arrived before this request have started; one turn lets their handlers finish.
    await nextTurn();
    return this.ingested;
  }
}

@Module({ controllers: [BenchController] })
class NestTcpServerModule {}

serverProcess(async () => {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(NestTcpServerModule, {
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port: 0 },
    logger: false,
  });
  await app.listen();
  const { address, port } = app.unwrap<Server>().address() as AddressInfo;
  if (!port) throw new Error('Nest TCP did not report a bound port');
  return { endpoint: `tcp://${address}:${port}`, close: () => app.close() };
});
