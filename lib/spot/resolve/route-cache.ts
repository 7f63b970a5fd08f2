import { invalidArgument, runtimeMs } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { NodeRun, StoreVersion } from '../../core/ports/index.js';
import type { Clock, OwnerLeaseView } from './owner-lease-view.js';
import { type ReadyRoute, type ResolveResult, type RouteFences, fencesMatch } from './resolve-result.js';

/**
 * Why an entry left the route cache (docs/protocol.md#the-route-cache: the reasons an entry is dropped at
 * once, plus its two lifetimes and the size bound) — for the observability events to come.
 */
export type RouteDropReason =
  /** `routeCacheMaxAgeMs` (as it was when the entry was made) has passed. */
  | 'expired'
  /** The owner lease's admission deadline passed and the lease view shows no later one. */
  | 'leaseEnded'
  /** A larger StoreVersion of the key was seen. */
  | 'newerVersion'
  /** The owner answered that the route's fences are not its current ones. */
  | 'staleRoute'
  /** A messageFollow notice: a message on this route reached the old owner and was relayed to the new one. */
  | 'moved'
  /** The store recovered from an outage: every entry goes. */
  | 'storeRecovered'
  /** The owner's run ended: its node descriptor went, or its NodeRid came back with another generation. */
  | 'ownerRunEnded'
  /** The owner is leaving the mesh (a draining object server): its objects have moved on. */
  | 'ownerLeaving'
  /** The cache was full and this was the least recently used entry. */
  | 'evicted';

export interface RouteCacheOptions {
  /** `routeCacheMaxAgeMs`: 0 = no cache. Change it later with `setMaxAgeMs`. */
  readonly maxAgeMs: number;
  readonly clock: Clock;
  readonly leases: OwnerLeaseView;
  /** The most entries kept; past it the least recently used goes (`evicted`). @default 10000 */
  readonly maxEntries?: number;
  /** Told of every entry that leaves, with why; a throw is the listener's own and is dropped. */
  readonly onDrop?: (route: ReadyRoute, reason: RouteDropReason) => void;
}

/** @default 10000 — a caller talking to more live objects than this re-reads the coldest ones. */
export const DEFAULT_ROUTE_CACHE_MAX_ENTRIES = 10000;

/**
 * A store read for a miss, opened before the read and presented with its result: an invalidation of
 * its key (or of every key) in between spoils it, so a route read before a stale-route answer or a
 * store recovery is never cached after it.
 */
export interface MissTicket {
  readonly kind: ObjectKind;
  readonly id: string;
  /** Set by an invalidation after the ticket was opened: its result is not cached. */
  readonly spoiled: boolean;
}

interface Ticket extends MissTicket {
  spoiled: boolean;
  /** The largest StoreVersion seen for the key since the ticket was opened. */
  minVersion: StoreVersion;
}

/** One cached route, on an intrusive LRU list (most recent at `head`) so a hit allocates nothing. */
interface Entry {
  route: ReadyRoute;
  /**
   * Made + max age as it was then: a later change of max age never moves it
   * (docs/protocol.md#the-route-cache).
   */
  readonly ageLimit: number;
  readonly run: string;
  prev: Entry | undefined;
  next: Entry | undefined;
}

const runName = (run: NodeRun): string => `${run.rid}\u0000${run.nodeGeneration}`;

const checkMaxAge = (ms: number): number => runtimeMs('routeCacheMaxAgeMs', ms);

/**
 * The positive route cache of one object mesh (docs/protocol.md#the-route-cache): only confirmed Ready routes
 * with their fences — never Missing, Creating, Unavailable or a store failure
 * (docs/protocol.md#the-route-cache: the next call looks again). A snapshot of a recent lookup, never an
 * authority of its own. Every method is synchronous and reads no store.
 */
export class RouteCache {
  private maxAge: number;
  private readonly maxEntries: number;
  private readonly entries: Record<ObjectKind, Map<string, Entry>> = { spot: new Map(), actor: new Map() };
  private readonly byRun = new Map<string, Set<Entry>>();
  private readonly tickets: Record<ObjectKind, Map<string, Set<Ticket>>> = {
    spot: new Map(),
    actor: new Map(),
  };
  private head: Entry | undefined;
  private tail: Entry | undefined;
  private count = 0;

  constructor(private readonly options: RouteCacheOptions) {
    this.maxAge = checkMaxAge(options.maxAgeMs);
    const max = options.maxEntries ?? DEFAULT_ROUTE_CACHE_MAX_ENTRIES;
    if (!Number.isSafeInteger(max) || max < 1) throw invalidArgument('maxEntries', 'must be an integer >= 1');
    this.maxEntries = max;
  }

  /** The max age new entries get, in ms (0: nothing is cached). */
  get maxAgeMs(): number {
    return this.maxAge;
  }

  /** How many routes are cached now (expired ones not yet looked up included). */
  get size(): number {
    return this.count;
  }

  /**
   * Changes the max age of entries made from now on; an existing entry keeps the lifetime it was
   * made with, never extended to the new value (docs/protocol.md#the-route-cache). `0` stops caching
   * without dropping what is cached. Throws `InvalidArgument` unless `ms` is an integer >= 0; the
   * pairing with Message Follow (`cacheFollowProblem`) is the caller's to check.
   */
  setMaxAgeMs(ms: number): void {
    this.maxAge = checkMaxAge(ms);
  }

  /**
   * The cached route of (`kind`, `id`) while it may be used, else `undefined` (and an entry past its
   * lifetime goes: `expired`, or `leaseEnded`). An entry lives until the earlier of its max age and
   * the owner lease's current admission deadline (docs/protocol.md#the-route-cache): past the deadline the
   * route was made with, the lease view is asked again (memory, no store read) and a refreshed lease
   * gives a copy of the route with the later deadline. A hit allocates nothing otherwise. `now`: the
   * caller's reading of the same clock, if it has one.
   */
  lookup(kind: ObjectKind, id: string, now?: number): ReadyRoute | undefined {
    const entry = this.entries[kind].get(id);
    if (entry === undefined) return undefined;
    // A caller that just read the clock passes it: one read per call, not two.
    now ??= this.options.clock.now();
    if (now >= entry.ageLimit) {
      this.drop(entry, 'expired');
      return undefined;
    }
    if (now >= entry.route.admissionDeadline) {
      const deadline = this.options.leases.admissionDeadline(entry.route.owner);
      if (deadline === undefined || deadline <= now) {
        this.drop(entry, 'leaseEnded');
        return undefined;
      }
      entry.route = { ...entry.route, admissionDeadline: deadline };
    }
    this.toHead(entry);
    return entry.route;
  }

  /**
   * Opens a miss for (`kind`, `id`) before its store read; present the result with `close`. Every
   * open ticket must be closed (a `finally`), or the cache keeps it until an invalidation of its key.
   */
  open(kind: ObjectKind, id: string): MissTicket {
    const ticket: Ticket = { kind, id, spoiled: false, minVersion: 0 };
    let set = this.tickets[kind].get(id);
    if (set === undefined) this.tickets[kind].set(id, (set = new Set()));
    set.add(ticket);
    return ticket;
  }

  /**
   * Closes `ticket` with what its read gave (`undefined`: it failed) and caches it if it may be:
   * only a `ReadyRoute`, only while max age is not 0, only when no invalidation of the key came
   * since the ticket was opened, only when no larger StoreVersion was seen meanwhile, only before its
   * admission deadline, and never over an entry with a larger StoreVersion. Returns whether it was
   * cached. Any other result is never cached (docs/protocol.md#the-route-cache); an `Unavailable` still
   * tells its StoreVersion (an older entry goes as `newerVersion`).
   */
  close(ticket: MissTicket, result: ResolveResult | undefined): boolean {
    const t = ticket as Ticket;
    this.forget(t);
    if (result?.tag === 'Unavailable') this.observeVersion(t.kind, t.id, result.authority.version);
    if (result?.tag !== 'ReadyRoute' || t.spoiled || result.storeVersion < t.minVersion) return false;
    if (result.key.kind !== t.kind || result.key.id !== t.id) return false;
    return this.put(result);
  }

  /**
   * A StoreVersion of (`kind`, `id`) seen elsewhere (a CAS result, a record read for another purpose): an
   * entry with a smaller one goes at once (`newerVersion`, docs/protocol.md#the-route-cache), and a miss in
   * flight does not cache a result older than it.
   */
  observeVersion(kind: ObjectKind, id: string, version: StoreVersion): void {
    for (const t of this.tickets[kind].get(id) ?? []) t.minVersion = Math.max(t.minVersion, version);
    const entry = this.entries[kind].get(id);
    if (entry !== undefined && entry.route.storeVersion < version) this.drop(entry, 'newerVersion');
  }

  /**
   * The owner answered a call on route `fences` as stale (`staleRoute`), or a messageFollow notice said a
   * message on it was relayed to the object's new owner (`moved`): the entry goes only if it is that route —
   * an entry made since, with other fences, stays (docs/protocol.md#message-follow: a newer route stays).
   * Misses in flight for the key are spoiled either way. Returns whether an entry went.
   */
  invalidateStale(
    kind: ObjectKind,
    id: string,
    fences: RouteFences,
    reason: 'staleRoute' | 'moved' = 'staleRoute',
  ): boolean {
    this.spoil(kind, id);
    const entry = this.entries[kind].get(id);
    if (entry === undefined || !fencesMatch(entry.route, fences)) return false;
    this.drop(entry, reason);
    return true;
  }

  /**
   * A store read answered (`true`) or failed: the first answer after a failure is a store recovery
   * (docs/protocol.md#the-route-cache) — a route read before the outage may be older
   * than what changed while nobody could read.
   */
  storeAnswered(answered: boolean): void {
    if (!answered) this.storeFailing = true;
    else if (this.storeFailing) {
      this.storeFailing = false;
      this.storeRecovered();
    }
  }

  private storeFailing = false;

  /**
   * The store recovered from an outage: every entry goes (`storeRecovered`), every miss in flight is spoiled.
   */
  storeRecovered(): void {
    this.spoilAll();
    while (this.head !== undefined) this.drop(this.head, 'storeRecovered');
  }

  /**
   * Node run `run` ended (its descriptor went, or its NodeRid came back with another generation), or
   * it is leaving (`ownerLeaving`: a drain moved its objects on): every entry it owns goes, and every
   * miss in flight is spoiled.
   */
  ownerRunEnded(run: NodeRun, reason: 'ownerRunEnded' | 'ownerLeaving' = 'ownerRunEnded'): void {
    this.spoilAll();
    if (reason === 'ownerLeaving') this.leavingRuns.add(runName(run));
    else this.leavingRuns.delete(runName(run));
    const owned = this.byRun.get(runName(run));
    if (owned === undefined) return;
    for (const entry of [...owned]) this.drop(entry, reason);
  }

  /**
   * Whether `run` said it is leaving (a draining object server that moved its objects on): a read
   * that crossed that notice may still name it, and is read again before anything is sent.
   */
  isLeaving(run: NodeRun): boolean {
    return this.leavingRuns.size > 0 && this.leavingRuns.has(runName(run));
  }

  private readonly leavingRuns = new Set<string>();

  private put(route: ReadyRoute): boolean {
    const now = this.options.clock.now();
    if (this.maxAge === 0 || route.admissionDeadline <= now) return false;
    const { kind, id } = route.key;
    const existing = this.entries[kind].get(id);
    if (existing !== undefined) {
      // Two reads may end out of order: the older record never replaces the newer one.
      if (existing.route.storeVersion > route.storeVersion) return false;
      this.drop(existing, 'newerVersion');
    }
    if (this.count >= this.maxEntries && this.tail !== undefined) this.drop(this.tail, 'evicted');
    const entry: Entry = {
      route,
      ageLimit: now + this.maxAge,
      run: runName(route.owner),
      prev: undefined,
      next: undefined,
    };
    this.entries[kind].set(id, entry);
    let owned = this.byRun.get(entry.run);
    if (owned === undefined) this.byRun.set(entry.run, (owned = new Set()));
    owned.add(entry);
    this.count++;
    this.toHead(entry);
    return true;
  }

  private drop(entry: Entry, reason: RouteDropReason): void {
    const { kind, id } = entry.route.key;
    if (this.entries[kind].get(id) !== entry) return;
    this.entries[kind].delete(id);
    const owned = this.byRun.get(entry.run);
    owned?.delete(entry);
    if (owned?.size === 0) this.byRun.delete(entry.run);
    this.unlink(entry);
    this.count--;
    try {
      this.options.onDrop?.(entry.route, reason);
    } catch {
      // The listener's own failure; the entry is gone either way.
    }
  }

  private toHead(entry: Entry): void {
    if (this.head === entry) return;
    this.unlink(entry);
    entry.next = this.head;
    if (this.head !== undefined) this.head.prev = entry;
    this.head = entry;
    if (this.tail === undefined) this.tail = entry;
  }

  private unlink(entry: Entry): void {
    if (entry.prev !== undefined) entry.prev.next = entry.next;
    else if (this.head === entry) this.head = entry.next;
    if (entry.next !== undefined) entry.next.prev = entry.prev;
    else if (this.tail === entry) this.tail = entry.prev;
    entry.prev = entry.next = undefined;
  }

  private forget(ticket: Ticket): void {
    const set = this.tickets[ticket.kind].get(ticket.id);
    if (set?.delete(ticket) && set.size === 0) this.tickets[ticket.kind].delete(ticket.id);
  }

  private spoil(kind: ObjectKind, id: string): void {
    const set = this.tickets[kind].get(id);
    if (set === undefined) return;
    for (const t of set) t.spoiled = true;
    this.tickets[kind].delete(id);
  }

  private spoilAll(): void {
    for (const kind of ['spot', 'actor'] as const) {
      for (const set of this.tickets[kind].values()) for (const t of set) t.spoiled = true;
      this.tickets[kind].clear();
    }
  }
}
