// The Redis store is not re-exported here: ioredis is loaded only when a process configures it
// (loading it costs every message of a process measurably, see docs/decisions.md). Import the class
// from `nestjs-zlink/redis-store` to use it directly. The PostgreSQL State Store loads `pg` (an optional
// peer) only when it starts; its class is `nestjs-zlink/postgres-state-store`'s.
export { MemoryLocationStore } from './memory/memory-location-store.js';
export type { RedisLocationStoreOptions } from './redis/redis-location-store.js';
export { createLocationStore } from './create-store.js';
export { MemoryAuthorityStore, MemoryRelocationStore } from './memory/memory-object-stores.js';
export { MemoryStateStore, type MemoryStateStoreOptions } from './memory/memory-state-store.js';
export type { RedisStateStoreOptions } from './redis/redis-state-store.js';
export { createStateStore } from './create-state-store.js';
export type { PostgresStateStore, PostgresStateStoreOptions } from './postgres/postgres-state-store.js';
export type { RedisObjectStoreOptions } from './redis/redis-object-records.js';
export {
  createAuthorityStore,
  createRelocationStore,
  createRedisAuthorityStore,
  createRedisRelocationStore,
} from './create-object-stores.js';
export type { AuditedRecord, RecordKind } from './redis/records-audit.js';
export { openRecordsAudit } from './records-audit.js';
