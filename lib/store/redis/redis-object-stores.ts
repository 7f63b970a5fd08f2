import { AuthorityRecords, RelocationRecords } from '../records/object-records.js';
import { RedisObjectRecords, type RedisObjectStoreOptions } from './redis-object-records.js';

export type { RedisObjectStoreOptions } from './redis-object-records.js';

/**
 * The Authority Store on Redis (docs/architecture.md#stores-and-authority): one record per (mesh, kind, id),
 * every change a Lua compare-and-swap on its StoreVersion, no TTL: a record is the object's existence,
 * removed when the object is destroyed or released (a graceful stop releases every object of the node). Its
 * default prefix is the Location Store's: authority records live in the Location Store (their
 * `{mesh-node:<mesh>}:authority` slots keep them apart).
 */
export class RedisAuthorityStore extends AuthorityRecords {
  constructor(options: RedisObjectStoreOptions) {
    super(new RedisObjectRecords(options, 'authority', 'zlink', 'Authority Store'));
  }
}

/**
 * How long the Relocation Store's keys outlive the last write of their mesh: a record is the trace of
 * a move that ended within seconds and no call reads it, so a day leaves an operator time to look
 * (docs/operations.md#records-in-redis).
 */
export const RELOCATION_RECORD_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * The Relocation Store on Redis (docs/protocol.md#relocation-store): registered separately, with its own key
 * prefix, so it may share a Redis with the Location Store or live on another one. Its keys expire
 * `RELOCATION_RECORD_TTL_MS` after the mesh's last move.
 */
export class RedisRelocationStore extends RelocationRecords {
  constructor(options: RedisObjectStoreOptions) {
    super(
      new RedisObjectRecords(
        options,
        'relocation',
        'zlink-relocation',
        'Relocation Store',
        RELOCATION_RECORD_TTL_MS,
      ),
    );
  }
}
