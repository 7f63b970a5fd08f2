import type { LocationStore, NormalizedLocationStore } from '../core/index.js';
import type { RedisLocationStoreOptions } from './redis/redis-location-store.js';

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
  const redisOptions: RedisLocationStoreOptions =
    source.kind === 'redis'
      ? { redis: source.redis as RedisLocationStoreOptions['redis'], keyPrefix }
      : {
          cluster: {
            nodes: source.nodes as NonNullable<RedisLocationStoreOptions['cluster']>['nodes'],
            options: source.options as NonNullable<RedisLocationStoreOptions['cluster']>['options'],
          },
          keyPrefix,
        };
  return { store: new RedisLocationStore(redisOptions), owned: true };
}
