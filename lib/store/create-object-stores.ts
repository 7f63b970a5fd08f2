import type { AuthorityStore, RelocationStore } from '../core/index.js';
import type { RedisObjectStoreOptions } from './redis/redis-object-records.js';

/*
 * The Redis object stores, loaded on first use like the Location Store (ioredis is not loaded when
 * the framework is imported). Not wired into options or the runtime yet: the object layer will
 * register them (`relocationStore` with its own prefix, DESIGN §7).
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
