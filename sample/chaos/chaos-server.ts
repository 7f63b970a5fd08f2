/**
 * A chaos server process: serves the ClientServer channel `ledger`, is a Server member of `work` on
 * RouteMesh `chaos` and an object server there hosting the relocatable Spot `room`, published in (and
 * finding its peers through) the Location Store. Every
 * execution of a handler appends the request id to this process's own log (one line per execution,
 * written before the reply leaves), so the harness can count executions per request.
 * The harness SIGKILLs it, SIGSTOPs/SIGCONTs it and starts it again (a new lifecycle generation);
 * it runs under a shell guard that kills it when the harness goes (see chaos-process.ts).
 * Usage: node chaos-server.js <rid> <redisUrl> <logPath>
 */
import 'reflect-metadata';
import { closeSync, openSync, writeSync } from 'node:fs';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ChannelHandler,
  Spot,
  SpotHandler,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRuntime,
} from '../../lib/index.js';
import {
  CS_CHANNEL,
  CS_PACKET,
  MESH,
  MESH_CHANNEL,
  MESH_PACKET,
  MOVES_PREFIX,
  REQUEST_TIMEOUT_MS,
  ROOM_PACKET,
  ROOM_TYPE,
  storeOptions,
} from './chaos-config.js';

const [rid = 'srv-1', redisUrl = '', logPath = ''] = process.argv.slice(2);
if (!redisUrl || !logPath) throw new Error('usage: chaos-server.js <rid> <redisUrl> <logPath>');

// Append-only; a synchronous write per execution, so a SIGKILL loses no line of a reply that left.
const log = openSync(logPath, 'a');

interface Work {
  id: string;
}

function execute(work: Work): { id: string; by: string } {
  writeSync(log, `${work.id}\n`);
  return { id: work.id, by: rid };
}

@Injectable()
class ChaosHandlers {
  @ChannelHandler(CS_CHANNEL, CS_PACKET)
  post(@ZLinkPayload() work: Work) {
    return execute(work);
  }

  @ChannelHandler(MESH_CHANNEL, MESH_PACKET)
  work(@ZLinkPayload() work: Work) {
    return execute(work);
  }
}

/** A room the harness moves between servers while the clients call it: each call one logged execution. */
@Spot(ROOM_TYPE, { relocatable: true })
class ChaosRoom {
  private posts = 0;

  @SpotHandler(ROOM_PACKET)
  post(@ZLinkPayload() work: Work) {
    this.posts++;
    return execute(work);
  }

  capture(): number {
    return this.posts;
  }

  restore(posts: number): void {
    this.posts = posts;
  }
}

const local = { port: 0, bindHost: '127.0.0.1' };

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: storeOptions(redisUrl),
      relocationStore: { redis: redisUrl, keyPrefix: MOVES_PREFIX },
      clientServer: { [CS_CHANNEL]: { server: { rid, listen: local } } },
      meshes: {
        [MESH]: {
          rid,
          listen: local,
          discovery: 'auto',
          objectRole: 'server',
          channels: { [MESH_CHANNEL]: { role: 'server' } },
        },
      },
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    }),
  ],
  providers: [ChaosHandlers, ChaosRoom],
})
class ChaosServerModule {}

try {
  const app = await NestFactory.createApplicationContext(ChaosServerModule, { logger: false });
  const runtime = app.get(ZLinkRuntime);
  process.stdout.write(
    `${JSON.stringify({
      type: 'ready',
      rid,
      pid: process.pid,
      generation: runtime.generation,
      endpoint: runtime.endpoint(CS_CHANNEL),
      meshEndpoint: runtime.meshEndpoint(MESH),
    })}\n`,
  );
} catch (error) {
  closeSync(log);
  process.stdout.write(`${JSON.stringify({ type: 'fatal', rid, message: String(error) })}\n`);
  process.exit(1);
}
