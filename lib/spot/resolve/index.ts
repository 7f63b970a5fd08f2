// Where an object lives now: the Authority Store read once (a closed result), the positive route
// cache in front of it, the owner leases that bound a route's life, and placement among servers.
export { AuthorityResolver } from './resolver.js';
export { CachedResolver } from './cached-resolver.js';
export {
  type Clock,
  type OwnerLeaseView,
  type OwnerLiveness,
  SYSTEM_CLOCK,
  confirmedLive,
} from './owner-lease-view.js';
export { Placement, advertisedType } from './placement.js';
export type { ReadyRoute, ResolveResult } from './resolve-result.js';
export { RouteCache, type RouteCacheOptions, type RouteDropReason } from './route-cache.js';
