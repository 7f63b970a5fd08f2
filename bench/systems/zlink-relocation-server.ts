/**
 * ZLink object server of the relocation bench (bench/relocation.ts): hosts the relocatable Spot type
 * `mover` (an echo and a counter carried by `capture` / `restore`), with the Relocation Store on the
 * same private Redis under its own prefix. Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX, BENCH_RID.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Spot, SpotHandler, ZLinkModule, ZLinkPayload, ZLinkRuntime } from '../../lib/index.js';
import { emit } from '../workload/protocol.js';
import { serverProcess } from './harness.js';
import { BENCH_OBJECTS_MESH, objectsLocationStore } from './zlink-objects.js';
import { BENCH_LOAD_SPOT, BENCH_MOVER_TYPE, type MoveMark, epochMs } from './zlink-relocation.js';

@Spot(BENCH_MOVER_TYPE, { relocatable: true })
class BenchMover {
  private handled = 0;

  @SpotHandler('echo')
  echo(@ZLinkPayload() payload: unknown): unknown {
    this.handled++;
    return payload;
  }

  capture(): number {
    return this.handled;
  }

  restore(handled: number): void {
    this.handled = handled;
  }
}

const rid = process.env.BENCH_RID ?? 'bench-mover-server';
const relocationStore = {
  redis: process.env.BENCH_REDIS_URL as string,
  keyPrefix: `${process.env.BENCH_KEY_PREFIX ?? 'zlink-bench'}-moves`,
};

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: objectsLocationStore(),
      relocationStore,
      meshes: {
        [BENCH_OBJECTS_MESH]: {
          rid,
          objectRole: 'server',
          discovery: 'auto',
          listen: { bindHost: '127.0.0.1', port: 0 },
        },
      },
    }),
  ],
  providers: [BenchMover],
})
class ZLinkRelocationServerModule {}

/** The steps of the load Spot's moves this server saw, stamped as they happened; `relocation-marks` returns them. */
const marks: MoveMark[] = [];
const STEPS: ReadonlySet<string> = new Set<MoveMark['phase']>([
  'started',
  'relayReady',
  'opened',
  'committed',
]);

serverProcess(
  async () => {
    const app = await NestFactory.createApplicationContext(ZLinkRelocationServerModule, { logger: false });
    const runtime = app.get(ZLinkRuntime);
    runtime.events.subscribe((e) => {
      if (e.type === 'object_relocation' && e.id === BENCH_LOAD_SPOT && STEPS.has(e.phase))
        marks.push({ phase: e.phase as MoveMark['phase'], at: epochMs() });
    });
    const endpoint = runtime.meshEndpoint(BENCH_OBJECTS_MESH);
    if (!endpoint) throw new Error('the object mesh has no endpoint');
    return { endpoint, close: () => app.close() };
  },
  async (command) => {
    if (command.type !== 'relocation-marks') return false;
    emit({ type: 'relocation-marks', marks });
    return true;
  },
);
