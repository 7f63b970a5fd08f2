/**
 * The durable objects bench's client (bench/durable.ts): a Nest app on the bench's object mesh
 * (objectRole 'client') that calls the object server's rooms and players by global id. Commands:
 * - `rooms`: get-or-create every target's rooms, waiting for a server that hosts them (after a restart
 *   this restores them) → `{type:'rooms'}`;
 * - `run {target, workload, …}`: the bench's sequential or pipelined workload over that target's rooms
 *   → `{type:'result'}`;
 * - `fill` / `restore` (`ActorsCommand` in bench/systems/zlink-durable.ts) → `{type:'actors', result}`;
 * - `cost-start` / `cost-stop` (bench/systems/call-cost.ts), as the harness's clients answer them.
 * Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX, and the State Stores' (for the targets there are).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkError, ZLinkModule, ZLinkObjects, ZLinkRouteClient } from '../../lib/index.js';
import { type RunCommand, emit, fail, onCommands } from '../workload/protocol.js';
import { type Workable, runWorkload } from '../workload/workloads.js';
import { startCost, stopCost } from './call-cost.js';
import { objectsLocationStore } from './zlink-objects.js';
import {
  type ActorsCommand,
  type ActorsResult,
  DURABLE_MESH,
  DURABLE_SPOTS,
  type DurableTarget,
  actorId,
  actorType,
  durableProviders,
  durableStoresEnv,
  spotId,
  spotType,
} from './zlink-durable.js';

/** For an object server hosting the types to show up in discovery (after a restart too). */
const READY_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 30_000;
const CLOSE_GRACE_MS = 3000;
const ERRORS_KEPT = 5;

const targets: DurableTarget[] = ['none', ...durableProviders(durableStoresEnv())];

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: objectsLocationStore(),
      meshes: {
        [DURABLE_MESH]: {
          rid: 'bench-durable-client',
          objectRole: 'client',
          discovery: 'auto',
          listen: { bindHost: '127.0.0.1', port: 0 },
        },
      },
      requestTimeoutMs: CALL_TIMEOUT_MS,
    }),
  ],
})
class ZLinkDurableClientModule {}

/** Runs `task(i)` for i in [0, count), `concurrency` at a time. */
async function inParallel(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker));
}

/** `create()`, again while no object server hosting the type is known yet (NotFound) and time is left. */
async function whenHosted<T>(create: () => Promise<T>, deadline: number): Promise<T> {
  for (;;) {
    try {
      return await create();
    } catch (error) {
      const early = error instanceof ZLinkError && error.code === 'NotFound' && Date.now() < deadline;
      if (!early) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The rooms of `target` in turn; the ids made once, as a caller holding an object's id has it. */
function roomsTarget(route: ZLinkRouteClient, target: DurableTarget): Workable {
  const ids = Array.from({ length: DURABLE_SPOTS }, (_, i) => spotId(target, i));
  let next = 0;
  return {
    request: (payload) =>
      route
        .toSpot(ids[next++ % DURABLE_SPOTS] as string)
        .request('echo', payload)
        .async(),
    send: () => Promise.reject(new Error('the durable bench sends no one-way messages')),
    count: () =>
      route
        .toSpot(ids[0] as string)
        .request('turns', null)
        .async<number>(),
  };
}

async function actors(
  objects: ZLinkObjects,
  route: ZLinkRouteClient,
  c: ActorsCommand,
): Promise<ActorsResult> {
  let failed = 0;
  let mismatched = 0;
  const errors: string[] = [];
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const t0 = performance.now();
  await inParallel(c.count, c.concurrency, async (at) => {
    const i = c.from + at;
    const id = actorId(c.target, i);
    try {
      await whenHosted(() => objects.getOrCreateActor(actorType(c.target), id), deadline);
      const value = await route
        .toActor(id)
        .request(c.type === 'fill' ? 'set' : 'read', c.type === 'fill' ? i : null)
        .async<number | null>();
      if (value !== i) mismatched++;
    } catch (error) {
      failed++;
      if (errors.length < ERRORS_KEPT) errors.push(String((error as Error)?.message ?? error));
    }
  });
  return { ms: performance.now() - t0, failed, mismatched, errors };
}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(ZLinkDurableClientModule, { logger: false });
  const objects = app.get(ZLinkObjects);
  const route = app.get(ZLinkRouteClient);
  const workables = Object.fromEntries(targets.map((t) => [t, roomsTarget(route, t)])) as Record<
    DurableTarget,
    Workable
  >;
  const stop = async (): Promise<void> => {
    setTimeout(() => process.exit(0), CLOSE_GRACE_MS).unref();
    await app.close();
    process.exit(0);
  };
  onCommands(async (command) => {
    switch (command.type) {
      case 'rooms': {
        const deadline = Date.now() + READY_TIMEOUT_MS;
        for (const target of targets)
          await inParallel(DURABLE_SPOTS, 16, async (i) => {
            await whenHosted(() => objects.getOrCreateSpot(spotType(target), spotId(target, i)), deadline);
          });
        emit({ type: 'rooms' });
        break;
      }
      case 'run': {
        const run = command as unknown as RunCommand;
        const workable = workables[run.target as DurableTarget];
        if (!workable) throw new Error(`no target '${String(run.target)}'`);
        emit({ type: 'result', result: await runWorkload(workable, run) });
        break;
      }
      case 'fill':
      case 'restore':
        emit({ type: 'actors', result: await actors(objects, route, command as unknown as ActorsCommand) });
        break;
      case 'cost-start':
        startCost();
        emit({ type: 'costing' });
        break;
      case 'cost-stop':
        emit({ type: 'cost', cost: stopCost() });
        break;
      case 'shutdown':
        await stop();
        break;
      default:
        throw new Error(`unknown command ${command.type}`);
    }
  }, stop);
  emit({ type: 'ready', pid: process.pid });
}

main().catch(fail);
