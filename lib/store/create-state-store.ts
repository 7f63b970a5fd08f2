import type { NormalizedStateStore } from '../core/options/index.js';
import type { StateStore } from '../core/ports/index.js';
import { redisConnection } from './create-store.js';

/**
 * The State Store a validated `stateStores.<name>` entry names, and whether the runtime owns it (closes it
 * on stop): one the framework built from `redis`, `cluster` or `postgres` is its own, named after the entry and kept
 * under its key prefix; an `instance` stays with whoever made it. ioredis is loaded here, on first use,
 * not when the framework is imported (docs/decisions.md#location-store-in-the-runtime-discovery-lease-outage).
 * Not started: the caller calls `start()`.
 */
export async function createStateStore(
  options: NormalizedStateStore,
): Promise<{ store: StateStore; owned: boolean }> {
  const { name, source } = options;
  switch (source.kind) {
    case 'instance':
      return { store: source.instance, owned: false };
    case 'postgres': {
      // Its module loads pg only when the store starts (pg is an optional peer dependency).
      const { PostgresStateStore } = await import('./postgres/postgres-state-store.js');
      const store = new PostgresStateStore(
        { ...source.options, name: (source.options.name as string | undefined) ?? name },
        `stateStores.${name}.postgres`,
      );
      return { store, owned: true };
    }
    case 'redis':
    case 'cluster': {
      const { RedisStateStore } = await import('./redis/redis-state-store.js');
      const store = new RedisStateStore({ ...redisConnection(source), keyPrefix: source.keyPrefix, name });
      return { store, owned: true };
    }
  }
}
