/**
 * The core layer, room by room (each room's own index says what it holds). Rooms import only rooms
 * before them in this order, and the root files: errors, kinds, option checks, CURVE keys.
 */
export * from './errors.js';
export * from './kinds.js';
export * from './curve-keys.js';
export * from './wire/index.js';
export * from './observe/index.js';
export * from './calls/index.js';
export * from './ports/index.js';
export * from './options/index.js';
export * from './objects/index.js';
