/** Every option: shapes, defaults and the checks that turn what a user wrote into a normalized topology. */
export * from './options.js';
export * from './security-options.js';
