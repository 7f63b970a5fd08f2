/**
 * Spot and Actor classes as the layers above describe them, the contexts their handlers see, and sessions.
 */
export * from './object-classes.js';
export * from './persist-options.js';
export * from './object-context.js';
export * from './multicast.js';
export * from './session-context.js';
export * from './session-handlers.js';
