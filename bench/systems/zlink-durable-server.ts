/**
 * The durable objects bench's object server (bench/durable.ts): a Nest app on the bench's object mesh
 * hosting, for each target, a Spot type whose every `echo` turn changes its state, and an Actor type
 * the restore measurement fills and reads back. One class body for every target: `none` declares it
 * without `persist`, each provider with `persist: { store }` (every turn, the default), so the only
 * difference between the columns is the State Store. `close` → `{type:'closed', ms}`: a graceful stop
 * (state saved, objects released), timed. Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX (the Location Store),
 * BENCH_RID, and the State Stores' (bench/systems/zlink-durable.ts).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Actor,
  ActorHandler,
  Spot,
  SpotHandler,
  ZLinkContext,
  ZLinkModule,
  type ZLinkObjectContext,
  ZLinkPayload,
  ZLinkRuntime,
} from '../../lib/index.js';
import { emit } from '../workload/protocol.js';
import { serverProcess } from './harness.js';
import { objectsLocationStore } from './zlink-objects.js';
import {
  type BenchState,
  DURABLE_MESH,
  type DurableTarget,
  actorType,
  advance,
  benchState,
  durableProviders,
  durableStateStores,
  durableStoresEnv,
  spotType,
  storeName,
} from './zlink-durable.js';

/** How long a stop may take to save and release every object. */
const CLOSE_WAIT_MS = 120_000;

const stores = durableStoresEnv();
const targets: DurableTarget[] = ['none', ...durableProviders(stores)];

const persistOf = (target: DurableTarget, of: 'rooms' | 'players') =>
  target === 'none' ? {} : { persist: { store: storeName(target, of) } };

/** A room: every `echo` is a turn that changes the state (and, persistent, writes it before the reply). */
function roomClass(target: DurableTarget): new () => unknown {
  @Spot(spotType(target), persistOf(target, 'rooms'))
  class BenchRoom {
    private state: BenchState = benchState('room', 0);

    onActivate(ctx: { id: string }): void {
      if (this.state.turns === 0) this.state.name = ctx.id;
    }

    @SpotHandler('echo')
    echo(@ZLinkPayload() payload: unknown): unknown {
      advance(this.state);
      return payload;
    }

    @SpotHandler('turns')
    turns(): number {
      return this.state.turns;
    }

    capture(): BenchState {
      return this.state;
    }

    restore(state: BenchState): void {
      this.state = state;
    }
  }
  return BenchRoom;
}

/** A player: `set` gives it its state (`turns` = the number sent), `read` answers that number. */
function playerClass(target: DurableTarget): new () => unknown {
  @Actor(actorType(target), persistOf(target, 'players'))
  class BenchPlayer {
    private state: BenchState | undefined;

    @ActorHandler('set')
    set(@ZLinkPayload() turns: number, @ZLinkContext() ctx: ZLinkObjectContext): number {
      this.state = benchState(ctx.id, turns);
      return turns;
    }

    @ActorHandler('read')
    read(): number | null {
      return this.state?.turns ?? null;
    }

    capture(): BenchState | null {
      return this.state ?? null;
    }

    restore(state: BenchState | null): void {
      this.state = state ?? undefined;
    }
  }
  return BenchPlayer;
}

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: objectsLocationStore(),
      stateStores: durableStateStores(stores),
      meshes: {
        [DURABLE_MESH]: {
          rid: process.env.BENCH_RID ?? 'bench-durable-server',
          objectRole: 'server',
          discovery: 'auto',
          listen: { bindHost: '127.0.0.1', port: 0 },
        },
      },
      // A stop releases tens of thousands of objects here: let it finish rather than leave records to
      // lapse with the lease after the default 10 s.
      drainTimeoutMs: CLOSE_WAIT_MS,
    }),
  ],
  providers: targets.flatMap((t) => [roomClass(t), playerClass(t)]),
})
class ZLinkDurableServerModule {}

let closing: Promise<void> | undefined;
let closeApp: () => Promise<void> = () => Promise.resolve();
/** Closes once, whoever asks first (the `close` command, then the harness's `shutdown`). */
const close = (): Promise<void> => (closing ??= closeApp());

serverProcess(
  async () => {
    const app = await NestFactory.createApplicationContext(ZLinkDurableServerModule, { logger: false });
    closeApp = () => app.close();
    const endpoint = app.get(ZLinkRuntime).meshEndpoint(DURABLE_MESH);
    if (!endpoint) throw new Error('the durable mesh has no endpoint');
    return { endpoint, close };
  },
  async (command) => {
    if (command.type !== 'close') return false;
    const t0 = performance.now();
    await close();
    emit({ type: 'closed', ms: performance.now() - t0 });
    return true;
  },
);
