/**
 * The bench handlers every ZLink server process serves, through Nest's pipeline: `echo` returns the
 * payload, `ingest` (one-way) counts, `count` returns the count.
 */
import 'reflect-metadata';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { ChannelHandler, NodeHandler, ZLinkPayload, type ZLinkKeyPair } from '../../lib/index.js';

/** The ChannelName of every ZLink bench, on ClientServer and on RouteMesh alike. */
export const BENCH_CHANNEL = 'bench';
export const BENCH_MESH = 'bench-mesh';
export const BENCH_SERVER_RID = 'bench-server';
export const BENCH_CLIENT_RID = 'bench-client';

/** With `curve` among the process's arguments: the key pairs the bench made for this run. */
export function benchCurve(): { server: ZLinkKeyPair; client: ZLinkKeyPair } | undefined {
  if (!process.argv.includes('curve')) return undefined;
  return JSON.parse(process.env.BENCH_CURVE ?? '') as { server: ZLinkKeyPair; client: ZLinkKeyPair };
}

@Injectable()
export class BenchHandlers {
  private ingested = 0;

  @ChannelHandler(BENCH_CHANNEL, 'echo')
  echo(@ZLinkPayload() payload: unknown): unknown {
    return payload;
  }

  @ChannelHandler(BENCH_CHANNEL, 'ingest', { kind: 'send' })
  ingest(@ZLinkPayload() _payload: unknown): void {
    this.ingested++;
  }

  @ChannelHandler(BENCH_CHANNEL, 'count')
  async count(): Promise<number> {
    // Sends that arrived before this request have started; one turn lets their handlers finish.
    await nextTurn();
    return this.ingested;
  }
}

/** The same three, as Node direct handlers of the bench mesh (RouteMesh server only). */
@Injectable()
export class BenchNodeHandlers {
  constructor(private readonly handlers: BenchHandlers) {}

  @NodeHandler(BENCH_MESH, 'echo')
  echo(@ZLinkPayload() payload: unknown): unknown {
    return payload;
  }

  @NodeHandler(BENCH_MESH, 'ingest', { kind: 'send' })
  ingest(@ZLinkPayload() payload: unknown): void {
    this.handlers.ingest(payload);
  }

  @NodeHandler(BENCH_MESH, 'count')
  count(): Promise<number> {
    return this.handlers.count();
  }
}
