import type { LocationStore } from '../core/ports/index.js';
import type { NormalizedLocationStore, NormalizedStoreSource } from '../core/options/index.js';
import type { RedisConnectionOptions } from './redis/client.js';

/**
 * The store a validated `locationStore` option names, and whether the runtime owns it (closes it
 * on stop): a Redis store it built is its own; an `instance` stays with whoever made it. ioredis is
 * loaded here, on first use, not when the framework is imported.
 */
export async function createLocationStore(
  options: NormalizedLocationStore,
): Promise<{ store: LocationStore; owned: boolean }> {
  const { source, keyPrefix } = options;
  if (source.kind === 'instance') return { store: source.instance, owned: false };
  const { RedisLocationStore } = await import('./redis/redis-location-store.js');
  return { store: new RedisLocationStore({ ...redisConnection(source), keyPrefix }), owned: true };
}

/** The ioredis connection a `redis` or `cluster` store source names, passed through as given. */
export function redisConnection(
  source: Exclude<NormalizedStoreSource<unknown>, { kind: 'instance' }>,
): RedisConnectionOptions {
  return source.kind === 'redis'
    ? { redis: source.redis as RedisConnectionOptions['redis'] }
    : {
        cluster: {
          nodes: source.nodes as NonNullable<RedisConnectionOptions['cluster']>['nodes'],
          options: source.options as NonNullable<RedisConnectionOptions['cluster']>['options'],
        },
      };
}
