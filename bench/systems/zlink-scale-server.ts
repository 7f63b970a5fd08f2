/**
 * An object server of the scale bench (bench/scale.ts): a Nest app on the scale mesh hosting one
 * relocatable Spot type and one relocatable Actor type whose state is one number, so an idle
 * activation costs what the framework keeps for it. `memory` → `{type:'memory', reading}` after two
 * full collections (run with `--expose-gc`). Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX, BENCH_RID.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Actor, ActorHandler, Spot, SpotHandler, ZLinkModule, ZLinkRuntime } from '../../lib/index.js';
import { emit } from '../workload/protocol.js';
import { serverProcess } from './harness.js';
import { SCALE_ACTOR_TYPE, SCALE_MESH, SCALE_SPOT_TYPE, scaleStores, settledMemory } from './zlink-scale.js';

@Spot(SCALE_SPOT_TYPE, { relocatable: true })
class IdleSpot {
  private calls = 0;

  @SpotHandler('touch')
  touch(): number {
    return ++this.calls;
  }

  capture(): number {
    return this.calls;
  }

  restore(calls: number): void {
    this.calls = calls;
  }
}

@Actor(SCALE_ACTOR_TYPE, { relocatable: true })
class IdleActor {
  private calls = 0;

  @ActorHandler('touch')
  touch(): number {
    return ++this.calls;
  }

  capture(): number {
    return this.calls;
  }

  restore(calls: number): void {
    this.calls = calls;
  }
}

@Module({
  imports: [
    ZLinkModule.forRoot({
      ...scaleStores(),
      meshes: {
        [SCALE_MESH]: {
          rid: process.env.BENCH_RID ?? 'bench-scale-server',
          objectRole: 'server',
          discovery: 'auto',
          listen: { bindHost: '127.0.0.1', port: 0 },
        },
      },
    }),
  ],
  providers: [IdleSpot, IdleActor],
})
class ZLinkScaleServerModule {}

let runtime: ZLinkRuntime | undefined;

serverProcess(
  async () => {
    const app = await NestFactory.createApplicationContext(ZLinkScaleServerModule, { logger: false });
    const started = app.get(ZLinkRuntime);
    runtime = started;
    const endpoint = started.meshEndpoint(SCALE_MESH);
    if (!endpoint) throw new Error('the scale mesh has no endpoint');
    return { endpoint, close: () => app.close() };
  },
  async (command) => {
    if (command.type !== 'memory') return false;
    const count = runtime?.snapshot().objects?.activations.length ?? 0;
    emit({ type: 'memory', reading: await settledMemory(count) });
    return true;
  },
);
