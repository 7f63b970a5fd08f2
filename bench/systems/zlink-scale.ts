/** What the scale bench's processes share (bench/scale.ts). */
import { setTimeout as sleep } from 'node:timers/promises';
import type { LocationStoreOptions, RelocationStoreOptions } from '../../lib/index.js';
import { objectsLocationStore } from './zlink-objects.js';

export const SCALE_MESH = 'bench-scale';
/** Relocatable, trivial state: what an idle activation costs when it holds nothing of its own. */
export const SCALE_SPOT_TYPE = 'idle-spot';
export const SCALE_ACTOR_TYPE = 'idle-actor';
/** The two object servers: the first holds the activations whose memory is measured. */
export const SCALE_SERVERS = ['bench-scale-1', 'bench-scale-2'] as const;

/** One process's memory after two full collections (`--expose-gc`). */
export interface MemoryReading {
  readonly heapUsed: number;
  readonly rss: number;
  /** Activations this node owns (object servers), or route-cache entries (the cache child). */
  readonly count: number;
}

/** Heap and RSS once garbage is gone: two collections, a turn between them for finalizers. */
export async function settledMemory(count: number): Promise<MemoryReading> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  await sleep(50);
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss, count };
}

/** Runner → client: create `count` objects `prefix-<from..>` on `node`, `concurrency` creations in flight. */
export interface CreateCommand {
  readonly type: 'create';
  readonly kind: 'spot' | 'actor';
  readonly prefix: string;
  readonly from: number;
  readonly count: number;
  readonly node: string;
  readonly concurrency: number;
}

export interface CreateResult {
  readonly created: number;
  readonly failed: number;
  readonly ms: number;
}

/** Runner → client: `concurrency` Spots (already created) each moved back and forth for `durationMs`. */
export interface RelocateCommand {
  readonly type: 'relocate';
  readonly prefix: string;
  readonly concurrency: number;
  readonly durationMs: number;
}

export interface RelocateResult {
  readonly committed: number;
  readonly aborted: number;
  readonly failed: number;
  readonly ms: number;
}

export function scaleStores(): {
  locationStore: LocationStoreOptions;
  relocationStore: RelocationStoreOptions;
} {
  const locationStore = objectsLocationStore();
  return {
    locationStore,
    relocationStore: { redis: locationStore.redis, keyPrefix: `${locationStore.keyPrefix}-moves` },
  };
}
