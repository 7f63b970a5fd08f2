export * from './core/index.js';
export * from './runtime/index.js';
