import type { ObjectKind } from '../../core/kinds.js';
import type { ResolveResult } from './resolve-result.js';
import type { AuthorityResolver } from './resolver.js';
import type { MissTicket, RouteCache } from './route-cache.js';

interface Flight {
  readonly ticket: MissTicket;
  readonly result: Promise<ResolveResult>;
}

/**
 * Direct resolution (docs/protocol.md#resolving-a-global-id): the positive route cache first, the
 * Authority Store on a miss, and a Ready result cached for the next call. Concurrent misses of one
 * object share one store read, unless an invalidation of that object came after the read started
 * (then a new call reads again rather than wait for a route it would not cache).
 */
export class CachedResolver {
  private readonly flights: Record<ObjectKind, Map<string, Flight>> = { spot: new Map(), actor: new Map() };

  constructor(
    readonly resolver: AuthorityResolver,
    readonly cache: RouteCache,
  ) {}

  /**
   * As `AuthorityResolver.resolve`, but a usable cached route answers at once without reading the
   * store (docs/protocol.md#the-route-cache: a cache hit reads no store), and a `ReadyRoute` read on a miss
   * is cached as `RouteCache.close` allows. Missing, Unavailable and StoreFailure are never cached:
   * the next call reads again. Rejects only with `InvalidArgument` (bad kind or id).
   */
  resolve(kind: ObjectKind, id: string): Promise<ResolveResult> {
    // The resolver refuses a bad kind; the cache's tables are only for the two good ones.
    if (kind !== 'spot' && kind !== 'actor') return this.resolver.resolve(kind, id);
    const hit = this.cache.lookup(kind, id);
    if (hit !== undefined) return Promise.resolve(hit);
    const flights = this.flights[kind];
    const flight = flights.get(id);
    if (flight !== undefined && !flight.ticket.spoiled) return flight.result;
    return this.miss(kind, id, flights);
  }

  private miss(kind: ObjectKind, id: string, flights: Map<string, Flight>): Promise<ResolveResult> {
    const ticket = this.cache.open(kind, id);
    const result = this.resolver.resolve(kind, id).then(
      (value) => {
        this.land(flights, id, flight);
        this.cache.close(ticket, value);
        return value;
      },
      (error: unknown) => {
        this.land(flights, id, flight);
        this.cache.close(ticket, undefined);
        throw error;
      },
    );
    const flight: Flight = { ticket, result };
    flights.set(id, flight);
    return result;
  }

  private land(flights: Map<string, Flight>, id: string, flight: Flight): void {
    if (flights.get(id) === flight) flights.delete(id);
  }
}
