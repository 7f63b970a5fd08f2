import type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
import type { LocationStore, NormalizedLocationStore } from '../core/index.js';
import { RedisLocationStore } from './redis/redis-location-store.js';

/**
 * The store a validated `locationStore` option names, and whether the runtime owns it (closes it
 * on stop): a Redis store it built is its own; an `instance` stays with whoever made it.
 */
export function createLocationStore(options: NormalizedLocationStore): {
  store: LocationStore;
  owned: boolean;
} {
  const { source, keyPrefix } = options;
  switch (source.kind) {
    case 'instance':
      return { store: source.instance, owned: false };
    case 'redis':
      return {
        store: new RedisLocationStore({ redis: source.redis as string | RedisOptions, keyPrefix }),
        owned: true,
      };
    case 'cluster':
      return {
        store: new RedisLocationStore({
          cluster: { nodes: source.nodes as ClusterNode[], options: source.options as ClusterOptions },
          keyPrefix,
        }),
        owned: true,
      };
  }
}
