/**
 * The ports other layers implement (mesh link, session link, Location, Authority and Relocation Stores) and
 * the owner lease over them.
 */
export * from './ports.js';
export * from './lease.js';
export * from './store-health.js';
export * from './mesh-link.js';
export * from './object-stores.js';
export * from './object-records.js';
export * from './session-link.js';
