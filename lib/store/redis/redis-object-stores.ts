import { AuthorityRecords, RelocationRecords } from '../records/object-records.js';
import { RedisObjectRecords, type RedisObjectStoreOptions } from './redis-object-records.js';

export type { RedisObjectStoreOptions } from './redis-object-records.js';

/**
 * The Authority Store on Redis (DESIGN §7): one record per (mesh, kind, id), every change a Lua
 * compare-and-swap on its StoreVersion, no TTL. Its default prefix is the Location Store's: authority
 * records live in the Location Store (their `{authority:<mesh>}` slots keep them apart).
 */
export class RedisAuthorityStore extends AuthorityRecords {
  constructor(options: RedisObjectStoreOptions) {
    super(new RedisObjectRecords(options, 'authority', 'zlink', 'Authority Store'));
  }
}

/**
 * The Relocation Store on Redis (guide §6.1): registered separately, with its own key prefix, so it
 * may share a Redis with the Location Store or live on another one.
 */
export class RedisRelocationStore extends RelocationRecords {
  constructor(options: RedisObjectStoreOptions) {
    super(new RedisObjectRecords(options, 'relocation', 'zlink-relocation', 'Relocation Store'));
  }
}
