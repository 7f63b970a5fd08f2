import { ZLinkError } from '../errors.js';
import type { ZLinkEvents } from '../observe/events.js';
import type { AuthorityStore } from './object-stores.js';
import type { LocationStore } from './ports.js';

/**
 * Whether the store answers, as every operation on it finds — the one rule behind a store recovery (a cached
 * route is dropped when the store recovers: docs/protocol.md#the-route-cache). Failing from the first
 * failure: an operation that rejected, or one whose caller gave up waiting for it (`failed`). Recovered at
 * the first answer after that, whatever path it came by (a call's read, a creation's write, the lease's
 * refresh, discovery's full read) and whether or not its own caller still waits for it: a read that outlived
 * its caller is the first news that the store is back. One per runtime: to a caller the Location Store and
 * the Authority Store beside it are one store.
 */
export class StoreHealth {
  private failing = false;
  private readonly recoveredListeners = new Set<() => void>();

  constructor(private readonly events?: ZLinkEvents) {}

  /** Whether the last word on the store was a failure. */
  get isFailing(): boolean {
    return this.failing;
  }

  /** An operation failed, or its caller stopped waiting for it. `reason` goes in the event. */
  failed(reason: string): void {
    if (this.failing) return;
    this.failing = true;
    this.events?.emit({ type: 'store', state: 'failing', reason });
  }

  /** An operation answered: the first answer after a failure is a recovery, told to every listener. */
  answered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.events?.emit({ type: 'store', state: 'recovered' });
    for (const listener of [...this.recoveredListeners]) {
      try {
        listener();
      } catch {
        // The listener's own failure; the others still hear of the recovery.
      }
    }
  }

  /** Calls `listener` at every recovery; returns the unsubscribe function. */
  onRecovered(listener: () => void): () => void {
    this.recoveredListeners.add(listener);
    return () => this.recoveredListeners.delete(listener);
  }

  /**
   * `op` as it was, reported when it ends. A `ZLinkError` is the store's answer or our own refusal
   * before asking (`ProtocolError`: a record it holds cannot be read; `InvalidArgument`: never sent),
   * so only `ProtocolError` counts, as an answer; any other rejection is a failure.
   */
  watch<T>(op: Promise<T>): Promise<T> {
    return op.then(
      (value) => {
        this.answered();
        return value;
      },
      (error: unknown) => {
        if (!(error instanceof ZLinkError))
          this.failed(error instanceof Error ? error.message : String(error));
        else if (error.code === 'ProtocolError') this.answered();
        throw error;
      },
    );
  }
}

/** `store` with every operation reported to `health`. */
export function watchedAuthorityStore(store: AuthorityStore, health: StoreHealth): AuthorityStore {
  return {
    get: (key) => health.watch(store.get(key)),
    compareAndSet: (key, expected, next) => health.watch(store.compareAndSet(key, expected, next)),
    delete: (key, expected) => health.watch(store.delete(key, expected)),
    takeOver: (key, expected, next, previous) => health.watch(store.takeOver(key, expected, next, previous)),
    listByOwner: (mesh, rid) => health.watch(store.listByOwner(mesh, rid)),
    close: () => store.close(),
  };
}

/**
 * `store` with every operation that reaches it reported to `health` (`watch` registers a listener and
 * `ping` is a health check's own round trip: both count too). `authorityStore()` is passed through
 * unwatched: the runtime watches the one it builds.
 */
export function watchedLocationStore(store: LocationStore, health: StoreHealth): LocationStore {
  const watched: LocationStore = {
    put: (descriptor, leaseMs) => health.watch(store.put(descriptor, leaseMs)),
    refresh: (descriptors, leaseMs) => health.watch(store.refresh(descriptors, leaseMs)),
    remove: (descriptor) => health.watch(store.remove(descriptor)),
    list: (kind, scope) => health.watch(store.list(kind, scope)),
    watch: (kind, scope, onChange) => health.watch(store.watch(kind, scope, onChange)),
    close: () => store.close(),
  };
  if (store.ping) {
    const ping = store.ping.bind(store);
    watched.ping = (timeoutMs) => health.watch(ping(timeoutMs));
  }
  if (store.authorityStore) watched.authorityStore = store.authorityStore.bind(store);
  return watched;
}
