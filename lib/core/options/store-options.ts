import { configurationError } from '../errors.js';
import { type LeaseTiming, normalizeLeaseTiming } from '../ports/lease.js';
import { checkKeys, isRecord, nonNegativeInt, positiveInt } from '../option-checks.js';
import type { RelocationStore } from '../ports/object-stores.js';
import type { LocationStore } from '../ports/ports.js';

/**
 * The `locationStore` and `relocationStore` options: exactly one store each
 * (docs/protocol.md#location-store), where it lives and its key prefix; the Location Store also the
 * owner-lease timing and how often readers do a full read. Only shapes are checked here; `lib/runtime` and
 * `lib/store` build the stores.
 */

/** Where a store lives when the framework builds it: give `redis`, `cluster` or the store's `instance`. */
export interface StoreConnectionOptions {
  /** Redis standalone or Sentinel: a `redis://` URL or ioredis options, passed through. */
  redis?: string | Record<string, unknown>;
  /** Redis Cluster: seed nodes and ioredis cluster options, passed through. */
  cluster?: { nodes: unknown[]; options?: Record<string, unknown> };
}

export interface LocationStoreOptions extends StoreConnectionOptions {
  /**
   * A store object of your own making, e.g. `new MemoryLocationStore()` shared by runtimes of one
   * process. The framework never builds one for you (docs/protocol.md#location-store); you opt in here.
   */
  instance?: LocationStore;
  /** Keeps two stores on one Redis apart. @default 'zlink' */
  keyPrefix?: string;
  /**
   * Owner-lease timing (docs/protocol.md#owner-lease-and-fencing). @default { ttlMs: 10000, refreshMs: 3000,
   * refreshTimeoutMs: 2000, marginMs: 1000 }
   */
  lease?: Partial<LeaseTiming>;
  /**
   * How often discovery reads every descriptor again, the safety net for lost notifications. @default 5000
   */
  fullReadIntervalMs?: number;
  /**
   * How long `start()` (Nest: `init()` / `listen()`) waits for the store's first answer before it fails
   * with `Unavailable` naming the store and why; 0 starts without waiting (found once the store answers).
   * @default 10000
   */
  startupTimeoutMs?: number;
}

/**
 * The Relocation Store: what a move of a Spot or Actor leaves behind (docs/protocol.md#relocation-store).
 * Registered apart from the Location Store, which it needs; it may share its Redis, never its key prefix.
 */
export interface RelocationStoreOptions extends StoreConnectionOptions {
  /**
   * A store object of your own making (tests: `MemoryRelocationStore`); the framework never builds one
   * unasked.
   */
  instance?: RelocationStore;
  /**
   * Keeps it apart from the Location Store on a shared Redis; must differ from `locationStore.keyPrefix`.
   * @default 'zlink-relocation'
   */
  keyPrefix?: string;
}

export type NormalizedStoreSource<I = LocationStore> =
  | { readonly kind: 'redis'; readonly redis: string | Record<string, unknown> }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly unknown[];
      readonly options: Record<string, unknown> | undefined;
    }
  | { readonly kind: 'instance'; readonly instance: I };

export interface NormalizedLocationStore {
  readonly source: NormalizedStoreSource;
  readonly keyPrefix: string;
  readonly lease: LeaseTiming;
  readonly fullReadIntervalMs: number;
  readonly startupTimeoutMs: number;
}

export interface NormalizedRelocationStore {
  readonly source: NormalizedStoreSource<RelocationStore>;
  readonly keyPrefix: string;
}

/** What tells one store option from the other: its field, keys, default prefix and port. */
interface StoreKind {
  readonly field: string;
  readonly name: string;
  readonly keys: readonly string[];
  readonly defaultPrefix: string;
  readonly port: string;
  readonly methods: readonly string[];
}

const SOURCE_KEYS = ['redis', 'cluster', 'instance', 'keyPrefix'];
const LOCATION: StoreKind = {
  field: 'locationStore',
  name: 'Location Store',
  keys: [...SOURCE_KEYS, 'lease', 'fullReadIntervalMs', 'startupTimeoutMs'],
  defaultPrefix: 'zlink',
  port: 'LocationStore',
  methods: ['put', 'refresh', 'remove', 'list', 'watch', 'close'],
};
const RELOCATION: StoreKind = {
  field: 'relocationStore',
  name: 'Relocation Store',
  keys: SOURCE_KEYS,
  defaultPrefix: 'zlink-relocation',
  port: 'RelocationStore',
  methods: ['get', 'compareAndSet', 'delete', 'listByNode', 'close'],
};

export function normalizeLocationStore(value: unknown): NormalizedLocationStore | undefined {
  const store = normalizeStore<LocationStore>(LOCATION, value);
  if (store === undefined) return undefined;
  const { field } = LOCATION;
  return Object.freeze({
    source: store.source,
    keyPrefix: store.keyPrefix,
    lease: normalizeLeaseTiming(`${field}.lease`, store.value.lease),
    fullReadIntervalMs: positiveInt(`${field}.fullReadIntervalMs`, store.value.fullReadIntervalMs, 5000),
    startupTimeoutMs: nonNegativeInt(`${field}.startupTimeoutMs`, store.value.startupTimeoutMs, 10000),
  });
}

/**
 * The `relocationStore` option, checked against the normalized `locationStore`: it needs one (objects need a
 * Location Store first) and may share its Redis but not its key prefix (docs/protocol.md#relocation-store).
 */
export function normalizeRelocationStore(
  value: unknown,
  locationStore: NormalizedLocationStore | undefined,
): NormalizedRelocationStore | undefined {
  const store = normalizeStore<RelocationStore>(RELOCATION, value);
  if (store === undefined) return undefined;
  if (locationStore === undefined)
    throw configurationError(
      RELOCATION.field,
      'needs a locationStore: the Spots and Actors whose moves it records are found there',
    );
  if (store.keyPrefix === locationStore.keyPrefix)
    throw configurationError(
      `${RELOCATION.field}.keyPrefix`,
      `'${store.keyPrefix}' is locationStore.keyPrefix too; the two stores may share a Redis, never a key prefix`,
    );
  return Object.freeze({ source: store.source, keyPrefix: store.keyPrefix });
}

/** The part both store options share: exactly one source, and the key prefix. */
function normalizeStore<I>(
  kind: StoreKind,
  value: unknown,
): { value: Record<string, unknown>; source: NormalizedStoreSource<I>; keyPrefix: string } | undefined {
  if (value === undefined) return undefined;
  const { field } = kind;
  if (!isRecord(value))
    throw configurationError(field, 'must be an object { redis } | { cluster } | { instance }');
  checkKeys(field, value, kind.keys);
  const given = (['redis', 'cluster', 'instance'] as const).filter((k) => value[k] !== undefined);
  if (given.length !== 1) {
    throw configurationError(
      field,
      given.length === 0
        ? 'names no store: give one of redis, cluster or instance'
        : `registers ${given.join(' and ')}; a process registers exactly one ${kind.name}`,
    );
  }
  return {
    value,
    source: normalizeSource<I>(kind, given[0] as 'redis' | 'cluster' | 'instance', value),
    keyPrefix: checkKeyPrefix(`${field}.keyPrefix`, value.keyPrefix, kind.defaultPrefix),
  };
}

/** A Redis store's key prefix, `defaultPrefix` when not given: a non-empty string without `{` or `}`. */
export function checkKeyPrefix(field: string, value: unknown, defaultPrefix: string): string {
  const keyPrefix = value ?? defaultPrefix;
  if (typeof keyPrefix !== 'string' || keyPrefix.length === 0 || /[{}]/.test(keyPrefix))
    throw configurationError(field, 'must be a non-empty string without { or }');
  return keyPrefix;
}

function normalizeSource<I>(
  kind: StoreKind,
  which: 'redis' | 'cluster' | 'instance',
  value: Record<string, unknown>,
): NormalizedStoreSource<I> {
  if (which !== 'instance') return normalizeRedisSource(kind.field, which, value);
  return {
    kind: 'instance',
    instance: checkInstance<I>(`${kind.field}.instance`, kind.port, kind.methods, value.instance),
  };
}

/**
 * The `redis` or `cluster` source of the store option at `field` (`value` is that option): a URL or
 * ioredis options, or `{ nodes, options? }`, passed through as given.
 */
export function normalizeRedisSource(
  field: string,
  which: 'redis' | 'cluster',
  value: Record<string, unknown>,
): Exclude<NormalizedStoreSource<never>, { kind: 'instance' }> {
  switch (which) {
    case 'redis': {
      const redis = value.redis;
      if (typeof redis === 'string') {
        if (!/^rediss?:\/\//.test(redis))
          throw configurationError(`${field}.redis`, `must be a redis:// or rediss:// URL, got '${redis}'`);
        return { kind: 'redis', redis };
      }
      if (!isRecord(redis)) throw configurationError(`${field}.redis`, 'must be a URL or ioredis options');
      return { kind: 'redis', redis };
    }
    case 'cluster': {
      const cluster = value.cluster;
      if (!isRecord(cluster) || !Array.isArray(cluster.nodes) || cluster.nodes.length === 0)
        throw configurationError(`${field}.cluster`, 'must be { nodes: [seed, ...], options? }');
      if (cluster.options !== undefined && !isRecord(cluster.options))
        throw configurationError(`${field}.cluster.options`, 'must be ioredis cluster options');
      return { kind: 'cluster', nodes: cluster.nodes, options: cluster.options };
    }
  }
}

/**
 * `instance` as the store port `port` when it has every one of `methods`; otherwise `Configuration` naming
 * `field` and the methods it lacks. A store object of the user's making is checked by its shape: the port
 * is an interface, there is no class to test against.
 */
export function checkInstance<I>(
  field: string,
  port: string,
  methods: readonly string[],
  instance: unknown,
): I {
  const missing = methods.filter(
    (m) => !isRecord(instance) || typeof (instance as Record<string, unknown>)[m] !== 'function',
  );
  if (missing.length > 0)
    throw configurationError(field, `must be a ${port} (missing ${missing.join(', ')})`);
  return instance as I;
}
