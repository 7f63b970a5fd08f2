/**
 * The ports other layers implement (mesh link, session link, Location, Authority, Relocation and State
 * Stores) and the owner lease over them.
 */
export * from './ports.js';
export * from './lease.js';
export * from './store-health.js';
export * from './mesh-link.js';
export * from './object-stores.js';
export * from './object-records.js';
export * from './state-store.js';
export * from './state-batches.js';
export * from './session-link.js';
