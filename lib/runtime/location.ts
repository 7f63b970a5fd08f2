import { ZLinkError } from '../core/errors.js';
import type { ZLinkEvents } from '../core/observe/index.js';
import { answerWithin } from '../core/calls/index.js';
import {
  type DescriptorKind,
  type LocationDescriptor,
  type LocationStore,
  OwnerLease,
  StoreHealth,
  watchedLocationStore,
} from '../core/ports/index.js';
import type { NormalizedLocationStore } from '../core/options/index.js';
import { createLocationStore } from '../store/index.js';
import { DescriptorDiscovery } from './discovery.js';

export interface LocationSnapshot {
  /** The owner lease passed its fencing deadline: new business messages are refused. */
  readonly fenced: boolean;
  /** Each automatic discovery: what its last good read found, and whether reads fail now. */
  readonly discovery: readonly {
    readonly kind: DescriptorKind;
    readonly scope: string;
    readonly descriptors: number;
    readonly outage: boolean;
  }[];
}

/** How long one round trip of the startup wait may take, and the pause before the next one. */
const FIRST_ANSWER_TRY_MS = 2000;
const FIRST_ANSWER_RETRY_MS = 100;

/** What `observeLists` tells: one good read of (`kind`, `scope`). */
export interface ListObserver {
  listed(kind: DescriptorKind, scope: string, descriptors: readonly LocationDescriptor[]): void;
}

/** What one bounded round trip to the Location Store found (`ZLinkRuntime.checkStore`). */
export interface StoreCheck {
  readonly answers: boolean;
  readonly responseTimeMs: number;
  /** Why it did not answer: the store's error, or the timeout. */
  readonly error?: string;
}

/**
 * The runtime's one Location Store (docs/protocol.md#location-store): the store it builds from
 * `locationStore`, the owner lease over every descriptor this process publishes, and the discovery readers.
 * Whatever needs to follow the lease (admission) registers with `onFence`.
 */
export class RuntimeLocation {
  /** The store, every operation on it reported to `health`. */
  readonly store: LocationStore;
  /** Whether the store answers, judged by every path that uses it (the object layer's too). */
  readonly health: StoreHealth;
  private readonly lease: OwnerLease;
  private readonly discoveries: DescriptorDiscovery[] = [];
  /** Every reader of one (kind, scope) shares its discovery: one read serves them all. */
  private readonly readers = new Map<
    string,
    { started: Promise<unknown>; listeners: ((list: LocationDescriptor[]) => void)[] }
  >();
  private readonly fenceListeners: ((fenced: boolean) => void)[] = [];
  /** A store passed in as `instance` stays its owner's to close. */
  private readonly owned: boolean;
  private closed = false;

  /**
   * Builds the store (loading its client library only now) and the lease over it, then waits for the
   * store's first answer, within `startupTimeoutMs` (0: no wait): a process says it is up only once
   * its store answered. Rejects with `Unavailable` naming the store and why (its error as `cause`),
   * the store closed.
   */
  static async create(options: NormalizedLocationStore, events: ZLinkEvents): Promise<RuntimeLocation> {
    const { store, owned } = await createLocationStore(options);
    const location = new RuntimeLocation(options, events, store, owned);
    if (options.startupTimeoutMs > 0) {
      try {
        // Asked of the store itself, not through `health`: a connection still being opened at startup
        // is not an outage, and must not be reported (`store` failing, then recovered) on every start.
        await firstAnswer(store, options.startupTimeoutMs);
      } catch (error) {
        await location.close();
        throw error;
      }
    }
    return location;
  }

  private constructor(
    readonly options: NormalizedLocationStore,
    private readonly events: ZLinkEvents,
    store: LocationStore,
    owned: boolean,
  ) {
    this.health = new StoreHealth(events);
    this.store = watchedLocationStore(store, this.health);
    this.owned = owned;
    this.lease = new OwnerLease(
      this.store,
      options.lease,
      events,
      (fenced) => {
        for (const listener of [...this.fenceListeners]) listener(fenced);
      },
      this.health,
    );
  }

  /** Calls `listener` on every change of the fence (`true`: fenced); returns the unsubscribe function. */
  onFence(listener: (fenced: boolean) => void): () => void {
    this.fenceListeners.push(listener);
    return () => {
      const at = this.fenceListeners.indexOf(listener);
      if (at >= 0) this.fenceListeners.splice(at, 1);
    };
  }

  /**
   * Writes this process's descriptors and starts the lease. A store that is down now does not stop the start:
   * the lease writes them once it answers (docs/protocol.md#location-store-outage: found after recovery).
   */
  async publish(descriptors: readonly LocationDescriptor[]): Promise<void> {
    await this.lease.start(descriptors);
  }

  /** A published descriptor changed (weight, drain, memberships): a larger revision goes to the store. */
  update(descriptor: LocationDescriptor): void {
    void this.lease.update(descriptor);
  }

  release(descriptor: LocationDescriptor): Promise<void> {
    return this.lease.release(descriptor);
  }

  get fenced(): boolean {
    return this.lease.isFenced;
  }

  /** Told of every good read of every discovery (a CURVE keyring learns the keys descriptors carry). */
  private readonly observers = new Set<ListObserver>();

  /** Adds `observer` (once, however often it is given) for every read from now on. */
  observeLists(observer: ListObserver): void {
    this.observers.add(observer);
  }

  /** Starts reading (`kind`, `scope`); resolves after the first read, whether it succeeded or not. */
  async discover(
    kind: DescriptorKind,
    scope: string,
    onList: (descriptors: LocationDescriptor[]) => void,
  ): Promise<void> {
    if (this.closed) return;
    const name = `${kind}\u0000${scope}`;
    const shared = this.readers.get(name);
    if (shared) {
      shared.listeners.push(onList);
      await shared.started;
      return;
    }
    const listeners = [onList];
    const discovery = new DescriptorDiscovery({
      store: this.store,
      kind,
      scope,
      fullReadIntervalMs: this.options.fullReadIntervalMs,
      events: this.events,
      // A listener's throw is reported by the discovery; the others still get the list.
      onList: (list) => {
        for (const o of this.observers) o.listed(kind, scope, list);
        let failure: unknown;
        for (const listener of listeners) {
          try {
            listener(list);
          } catch (error) {
            failure ??= error;
          }
        }
        if (failure !== undefined) throw failure;
      },
    });
    this.discoveries.push(discovery);
    const started = discovery.start();
    this.readers.set(name, { started, listeners });
    await started;
  }

  /** Reads (`kind`, `scope`) again now, when this process discovers it (reads coalesce). */
  hint(kind: DescriptorKind, scope: string): void {
    for (const d of this.discoveries) if (d.kind === kind && d.scope === scope) d.hint();
  }

  /**
   * One round trip to the store, bounded by `timeoutMs` (health checks): the store's `ping`, or a
   * `list` of an unused scope for a store without one. Never rejects.
   */
  async check(timeoutMs: number): Promise<StoreCheck> {
    const started = Date.now();
    try {
      await roundTrip(this.store, timeoutMs);
      return { answers: true, responseTimeMs: Date.now() - started };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // The store's own failure reached `health` already; a round trip that outlived its bound did not.
      this.health.failed(`health check: ${message}`);
      return { answers: false, responseTimeMs: Date.now() - started, error: message };
    }
  }

  snapshot(): LocationSnapshot {
    return {
      fenced: this.lease.isFenced,
      discovery: this.discoveries.map((d) => ({
        kind: d.kind,
        scope: d.scope,
        descriptors: d.last.length,
        outage: d.outage,
      })),
    };
  }

  /** Stops reading, removes this process's descriptors (graceful stop) and closes a store it built. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.discoveries.map((d) => d.close()));
    await this.lease.stop();
    if (this.owned) await this.store.close();
  }
}

/** Round trips to `store` until one is answered; `Unavailable` with the last failure after `timeoutMs`. */
async function firstAnswer(store: LocationStore, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = deadline - Date.now();
    try {
      await roundTrip(store, Math.max(1, Math.min(left, FIRST_ANSWER_TRY_MS)));
      return;
    } catch (error) {
      if (deadline - Date.now() <= 0) {
        const why = error instanceof Error ? error.message : String(error);
        throw new ZLinkError(
          'Unavailable',
          `locationStore: no answer within ${timeoutMs} ms (locationStore.startupTimeoutMs): ${why}`,
          { cause: error, details: { field: 'locationStore.startupTimeoutMs' } },
        );
      }
      // ioredis reconnects on its own schedule; asking again soon finds it as soon as it is back.
      await new Promise((done) => setTimeout(done, Math.min(FIRST_ANSWER_RETRY_MS, deadline - Date.now())));
    }
  }
}

/** One round trip: the store's `ping`, or a `list` of an unused scope for a store without one. */
async function roundTrip(store: LocationStore, timeoutMs: number): Promise<void> {
  const answer: Promise<unknown> = store.ping
    ? store.ping(timeoutMs)
    : store.list('server', 'zlink.health-check');
  await answerWithin(answer, timeoutMs, () => {
    throw new Error(`no answer within ${timeoutMs} ms`);
  });
}
