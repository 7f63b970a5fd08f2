export * from './core/index.js';
export * from './runtime/index.js';
export * from './nest/index.js';
