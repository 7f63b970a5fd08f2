export * from './resolve-result.js';
export * from './owner-lease-view.js';
export * from './resolver.js';
export * from './route-cache.js';
export * from './cached-resolver.js';
export { Placement, advertisedType } from './placement.js';
