/**
 * ZLink object client: a Nest app on the object mesh (objectRole 'client', discovery 'auto') that
 * calls the object server's channel `bench` and its `bench` Spots, with three targets:
 * `channel` (ChannelName select-one), `spot` (by global id, routes cached after the first call) and
 * `miss` (a second runtime in this process with `routeCacheMaxAgeMs: 0`: every call reads its route
 * from the Location Store first). Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ZLinkError,
  ZLinkModule,
  ZLinkObjects,
  type ZLinkOptions,
  ZLinkRouteClient,
  ZLinkRuntime,
} from '../../lib/index.js';
import { targetsProcess } from './harness.js';
import { BENCH_CHANNEL } from './zlink-handlers.js';
import {
  BENCH_OBJECTS_MESH,
  BENCH_SPOTS,
  BENCH_SPOT_TYPE,
  objectsLocationStore,
  spotId,
} from './zlink-objects.js';
import type { Workable } from '../workload/workloads.js';

/** Generous: a count waits behind every send still queued. */
const COUNT_TIMEOUT_MS = 60_000;
/** For the object server to show up in discovery and advertise its Spot type. */
const READY_TIMEOUT_MS = 20_000;
const CREATE_BATCH = 32;

function meshOptions(rid: string, objects?: { routeCacheMaxAgeMs: number }): ZLinkOptions {
  return {
    locationStore: objectsLocationStore(),
    meshes: {
      [BENCH_OBJECTS_MESH]: {
        rid,
        objectRole: 'client',
        discovery: 'auto',
        listen: { bindHost: '127.0.0.1', port: 0 },
        channels: { [BENCH_CHANNEL]: { role: 'client' } },
        ...(objects && { objects }),
      },
    },
  };
}

@Module({ imports: [ZLinkModule.forRoot(meshOptions('bench-objects-client'))] })
class ZLinkObjectsClientModule {}

/** Get-or-creates every bench Spot, retrying while no object server hosting the type is known yet. */
async function createSpots(objects: ZLinkObjects): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (let first = 0; first < BENCH_SPOTS; first += CREATE_BATCH) {
    const batch = Array.from({ length: Math.min(CREATE_BATCH, BENCH_SPOTS - first) }, (_, i) => first + i);
    for (;;) {
      try {
        await Promise.all(batch.map((i) => objects.getOrCreateSpot(BENCH_SPOT_TYPE, spotId(i))));
        break;
      } catch (error) {
        const early = error instanceof ZLinkError && error.code === 'NotFound' && Date.now() < deadline;
        if (!early) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}

/**
 * Calls the bench Spots in turn through `route`. The ids are made once, as a caller holding an object's
 * id has it: building the string for each call would charge the caller's own string work (and a
 * fresh string's hashing) to the call.
 */
function spotTarget(route: ZLinkRouteClient): Workable {
  const ids = Array.from({ length: BENCH_SPOTS }, (_, i) => spotId(i));
  let next = 0;
  return {
    request: (payload) =>
      route
        .toSpot(ids[next++ % BENCH_SPOTS] as string)
        .request('echo', payload)
        .async(),
    send: (payload) =>
      route
        .toSpot(ids[next++ % BENCH_SPOTS] as string)
        .send('ingest', payload)
        .async(),
    count: () =>
      route.toSpot(spotId(0)).request('count', null).async<number>({ timeoutMs: COUNT_TIMEOUT_MS }),
  };
}

targetsProcess(async () => {
  const app = await NestFactory.createApplicationContext(ZLinkObjectsClientModule, { logger: false });
  await app.get(ZLinkRuntime).waitForCandidates(BENCH_CHANNEL, 1, READY_TIMEOUT_MS);
  await createSpots(app.get(ZLinkObjects));
  const route = app.get(ZLinkRouteClient);
  const missing = new ZLinkRuntime(meshOptions('bench-objects-miss', { routeCacheMaxAgeMs: 0 }));
  await missing.start();
  await missing.waitForCandidates(BENCH_CHANNEL, 1, READY_TIMEOUT_MS);
  return {
    targets: {
      channel: {
        request: (payload) => route.requestToChannel(BENCH_CHANNEL, 'echo', payload).async(),
        send: (payload) => route.sendToChannel(BENCH_CHANNEL, 'ingest', payload).async(),
        count: () =>
          route.requestToChannel(BENCH_CHANNEL, 'count', null).async<number>({ timeoutMs: COUNT_TIMEOUT_MS }),
      },
      spot: spotTarget(route),
      miss: spotTarget(missing.routeClient),
    },
    close: async () => {
      await missing.close();
      await app.close();
    },
  };
});
