export { MemoryLocationStore } from './memory/memory-location-store.js';
export { RedisLocationStore, type RedisLocationStoreOptions } from './redis/redis-location-store.js';
export { createLocationStore } from './create-store.js';
