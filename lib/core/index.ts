export * from './errors.js';
export * from './events.js';
export * from './handlers.js';
export * from './metadata.js';
export * from './options.js';
export * from './pending.js';
export * from './selector.js';
export * from './wire.js';
