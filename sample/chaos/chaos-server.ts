/**
 * A chaos server process: serves the ClientServer channel `ledger`, is a Server member of `work` on
 * RouteMesh `chaos` and an object server there hosting the relocatable Spot `room` and the persistent
 * Actor `tally` (its State Store on a second Redis), published in (and finding its peers through) the
 * Location Store. Every
 * execution of a handler appends the request id to this process's own log (one line per execution,
 * written before the reply leaves), so the harness can count executions per request.
 * The harness SIGKILLs it, SIGSTOPs/SIGCONTs it and starts it again (a new lifecycle generation);
 * it runs under a shell guard that kills it when the harness goes (see chaos-process.ts).
 * Each activation of a tally says on stdout whether it is new or restored from the State Store.
 * Usage: node chaos-server.js <rid> <redisUrl> <stateRedisUrl> <logPath>
 */
import 'reflect-metadata';
import { closeSync, openSync, writeSync } from 'node:fs';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Actor,
  ActorHandler,
  ChannelHandler,
  Spot,
  SpotHandler,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRuntime,
  type ZLinkActivationContext,
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
  STATE_PREFIX,
  STATE_STORE,
  TALLY_ADD,
  TALLY_READ,
  TALLY_TYPE,
  storeOptions,
} from './chaos-config.js';
import { type TallyState, appendOp } from './chaos-tallies.js';

const [rid = 'srv-1', redisUrl = '', stateUrl = '', logPath = ''] = process.argv.slice(2);
if (!redisUrl || !stateUrl || !logPath)
  throw new Error('usage: chaos-server.js <rid> <redisUrl> <stateRedisUrl> <logPath>');

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

/** A tally call: a request id (logged as every execution is) and the client's op number to this tally. */
interface TallyWork extends Work {
  c: string;
  n: number;
}

/**
 * A tally: every turn saved before its reply (`persist: {}`), so every op a client heard back from must
 * be in its state wherever it comes back. Relocatable: the harness's moves take tallies too.
 */
@Actor(TALLY_TYPE, { relocatable: true, persist: {} })
class ChaosTally {
  private ops: TallyState = {};

  onActivate(ctx: ZLinkActivationContext): void {
    const restored = ctx.restored?.version;
    process.stdout.write(`${JSON.stringify({ type: 'tally', id: ctx.id, restored })}\n`);
  }

  @ActorHandler(TALLY_ADD)
  add(@ZLinkPayload() work: TallyWork) {
    appendOp(this.ops, work.c, work.n);
    return execute(work);
  }

  @ActorHandler(TALLY_READ)
  read(): TallyState {
    return this.ops;
  }

  capture(): TallyState {
    return this.ops;
  }

  restore(ops: TallyState): void {
    this.ops = ops;
  }
}

const local = { port: 0, bindHost: '127.0.0.1' };

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: storeOptions(redisUrl),
      relocationStore: { redis: redisUrl, keyPrefix: MOVES_PREFIX },
      stateStores: { [STATE_STORE]: { redis: stateUrl, keyPrefix: STATE_PREFIX } },
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
  providers: [ChaosHandlers, ChaosRoom, ChaosTally],
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
