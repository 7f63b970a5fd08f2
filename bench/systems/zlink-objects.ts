/** What the object server and client processes of the objects bench share (bench/objects.ts). */
import type { LocationStoreOptions } from '../../lib/index.js';

export const BENCH_OBJECTS_MESH = 'bench-objects';
export const BENCH_SPOT_TYPE = 'bench';

/**
 * How many Spots the client creates and calls in turn: as many as the pipelined workload keeps
 * requests outstanding, so its requests spread over the objects as the channel's do over handlers.
 */
export const BENCH_SPOTS = 256;

export const spotId = (i: number): string => `bench-spot-${i}`;

/** The private Redis the runner started (env `BENCH_REDIS_URL`, `BENCH_KEY_PREFIX`). */
export function objectsLocationStore(): LocationStoreOptions {
  const redis = process.env.BENCH_REDIS_URL;
  if (!redis) throw new Error('missing env BENCH_REDIS_URL');
  return { redis, keyPrefix: process.env.BENCH_KEY_PREFIX ?? 'zlink-bench' };
}
