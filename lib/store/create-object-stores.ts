import { configurationError } from '../core/errors.js';
import type { AuthorityStore, RelocationStore } from '../core/ports/index.js';
import type { NormalizedLocationStore, NormalizedRelocationStore } from '../core/options/index.js';
import type { RedisObjectStoreOptions } from './redis/redis-object-records.js';
import { redisConnection } from './create-store.js';

/*
 * The Redis object stores, loaded on first use like the Location Store (ioredis is not loaded when
 * the framework is imported). Not wired into options or the runtime yet: the object layer will
 * register them (`relocationStore` with its own prefix, docs/protocol.md#relocation-store).
 */

/** The Authority Store on Redis; `keyPrefix` defaults to the Location Store's, `'zlink'`. */
export async function createRedisAuthorityStore(options: RedisObjectStoreOptions): Promise<AuthorityStore> {
  const { RedisAuthorityStore } = await import('./redis/redis-object-stores.js');
  return new RedisAuthorityStore(options);
}

/** The Relocation Store on Redis; `keyPrefix` defaults to `'zlink-relocation'`. */
export async function createRedisRelocationStore(options: RedisObjectStoreOptions): Promise<RelocationStore> {
  const { RedisRelocationStore } = await import('./redis/redis-object-stores.js');
  return new RedisRelocationStore(options);
}

/**
 * The Authority Store of an object mesh, beside the Location Store `options` names, and whether the
 * runtime owns it (closes it on stop): a Redis store built from the same connection and key prefix,
 * or the `authorityStore()` of a store given as `instance`. `Configuration` for an instance without one.
 */
export async function createAuthorityStore(
  options: NormalizedLocationStore,
): Promise<{ store: AuthorityStore; owned: boolean }> {
  const { source, keyPrefix } = options;
  if (source.kind === 'instance') {
    const store = source.instance.authorityStore?.();
    if (!store)
      throw configurationError(
        'locationStore.instance',
        'Spots and Actors need a store that also keeps their authority records (an authorityStore() method, as MemoryLocationStore has)',
      );
    return { store, owned: false };
  }
  return { store: await createRedisAuthorityStore({ ...redisConnection(source), keyPrefix }), owned: true };
}

/**
 * The Relocation Store the `relocationStore` option names, and whether the runtime owns it (closes it
 * on stop): a Redis store on its own key prefix (it may share the Location Store's Redis), or the
 * instance given.
 */
export async function createRelocationStore(
  options: NormalizedRelocationStore,
): Promise<{ store: RelocationStore; owned: boolean }> {
  const { source, keyPrefix } = options;
  if (source.kind === 'instance') return { store: source.instance, owned: false };
  return { store: await createRedisRelocationStore({ ...redisConnection(source), keyPrefix }), owned: true };
}
