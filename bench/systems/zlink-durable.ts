/**
 * What the durable objects bench's processes share (bench/durable.ts): the targets, the object types and
 * ids, the state every object keeps, and the State Stores the object server is given through its env.
 */
import type { StateStoreOptions } from '../../lib/index.js';

export const DURABLE_MESH = 'bench-durable';

/** The State Store providers measured, one column each. */
export const DURABLE_PROVIDERS = ['redis', 'postgres'] as const;
export type DurableProvider = (typeof DURABLE_PROVIDERS)[number];

/** `none`: the same Spot class without `persist`; the others keep it in that provider, every turn. */
export const DURABLE_TARGETS = ['none', ...DURABLE_PROVIDERS] as const;
export type DurableTarget = (typeof DURABLE_TARGETS)[number];

/** Spots per target the client calls in turn: the pipelined requests spread over them. */
export const DURABLE_SPOTS = 64;

/** Each target its own Spot type (one class body, see the server) and its own ids. */
export const spotType = (target: DurableTarget): string => `bench-room-${target}`;
export const spotId = (target: DurableTarget, i: number): string => `${target}-room-${i}`;
/** The saved Actors of the restore measurement; `none`: the same class without `persist`. */
export const actorType = (target: DurableTarget): string => `bench-player-${target}`;
export const actorId = (target: DurableTarget, i: number): string => `${target}-player-${i}`;

/**
 * The state every bench object keeps, and every turn changes: a counter and a few fields, about what a
 * room or a player of a small game holds between turns (its msgpack size is in the report).
 */
export interface BenchState {
  turns: number;
  hp: number;
  x: number;
  y: number;
  name: string;
  zone: string;
}

export function benchState(name: string, turns: number): BenchState {
  return {
    turns,
    hp: 100 - (turns % 100),
    x: (turns * 7) % 1000,
    y: (turns * 13) % 1000,
    name,
    zone: 'north',
  };
}

/** One turn's change: every field but the name moves. */
export function advance(state: BenchState): void {
  state.turns++;
  state.hp = 100 - (state.turns % 100);
  state.x = (state.x + 7) % 1000;
  state.y = (state.y + 13) % 1000;
  state.zone = state.turns % 2 === 0 ? 'north' : 'south';
}

/** The State Stores' names in the server's `stateStores`: the Spots' rows apart from the Actors'. */
export const storeName = (provider: DurableProvider, of: 'rooms' | 'players'): string => `${provider}-${of}`;

/** Where the runner put the State Stores (env of both processes). */
export interface DurableStoresEnv {
  /** The Redis with `appendonly yes` for the `redis` rows (env BENCH_STATE_REDIS_URL). */
  readonly redisUrl: string;
  /** Key prefix of the `redis` rows: `<prefix>-rooms`, `<prefix>-players` (BENCH_STATE_KEY_PREFIX). */
  readonly keyPrefix: string;
  /** The bench's own PostgreSQL database (BENCH_POSTGRES_URL); absent: no `postgres` target. */
  readonly postgresUrl: string | undefined;
  /** Table prefix of the `postgres` rows: `<table>_rooms`, `<table>_players` (BENCH_POSTGRES_TABLE). */
  readonly table: string;
}

export function durableStoresEnv(env: NodeJS.ProcessEnv = process.env): DurableStoresEnv {
  const redisUrl = env.BENCH_STATE_REDIS_URL;
  if (!redisUrl) throw new Error('missing env BENCH_STATE_REDIS_URL');
  return {
    redisUrl,
    keyPrefix: env.BENCH_STATE_KEY_PREFIX ?? 'zlink-bench-state',
    postgresUrl: env.BENCH_POSTGRES_URL || undefined,
    table: env.BENCH_POSTGRES_TABLE ?? 'zlink_bench_state',
  };
}

export const redisPrefix = (env: DurableStoresEnv, of: 'rooms' | 'players'): string =>
  `${env.keyPrefix}-${of}`;
export const postgresTable = (env: DurableStoresEnv, of: 'rooms' | 'players'): string => `${env.table}_${of}`;

/** The providers this run measures: PostgreSQL only where the runner found one. */
export function durableProviders(env: DurableStoresEnv): DurableProvider[] {
  return DURABLE_PROVIDERS.filter((p) => p === 'redis' || env.postgresUrl !== undefined);
}

/** Pool size of each PostgreSQL State Store (the default): the per-connection figure divides by it. */
export const POSTGRES_POOL_SIZE = 4;

/** The object server's `stateStores`: per provider one store for the Spots and one for the Actors. */
export function durableStateStores(env: DurableStoresEnv): Record<string, StateStoreOptions> {
  const stores: Record<string, StateStoreOptions> = {};
  for (const of of ['rooms', 'players'] as const) {
    stores[storeName('redis', of)] = { redis: env.redisUrl, keyPrefix: redisPrefix(env, of) };
    if (env.postgresUrl !== undefined)
      stores[storeName('postgres', of)] = {
        postgres: {
          connectionString: env.postgresUrl,
          table: postgresTable(env, of),
          poolSize: POSTGRES_POOL_SIZE,
        },
      };
  }
  return stores;
}

/**
 * Runner → client: get-or-create the Actors `from` .. `from + count - 1` of `target` and `set` each to its
 * number (fill) or `read` it back (restore).
 */
export interface ActorsCommand {
  readonly type: 'fill' | 'restore';
  readonly target: DurableTarget;
  readonly from: number;
  readonly count: number;
  readonly concurrency: number;
}

export interface ActorsResult {
  readonly ms: number;
  /** Calls that failed (an error, not a wrong value). */
  readonly failed: number;
  /** `restore`: Actors whose state did not come back as it was set. */
  readonly mismatched: number;
  /** The first failures' messages. */
  readonly errors: readonly string[];
}
