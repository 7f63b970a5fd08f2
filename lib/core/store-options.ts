import { configurationError } from './errors.js';
import { type LeaseTiming, normalizeLeaseTiming } from './lease.js';
import { checkKeys, isRecord, positiveInt } from './option-checks.js';
import type { LocationStore } from './ports.js';

/**
 * The `locationStore` option: exactly one store (guide §6.1), its key prefix, the owner-lease timing
 * and how often readers do a full read. Only shapes are checked here; `lib/runtime` builds the store.
 */
export interface LocationStoreOptions {
  /** Redis standalone or Sentinel: a `redis://` URL or ioredis options, passed through. */
  redis?: string | Record<string, unknown>;
  /** Redis Cluster: seed nodes and ioredis cluster options, passed through. */
  cluster?: { nodes: unknown[]; options?: Record<string, unknown> };
  /**
   * A store object of your own making, e.g. `new MemoryLocationStore()` shared by runtimes of one
   * process. The framework never builds one for you (guide §6.1); you opt in here.
   */
  instance?: LocationStore;
  /** Keeps two stores on one Redis apart. @default 'zlink' */
  keyPrefix?: string;
  /** Owner-lease timing (DESIGN §4). @default { ttlMs: 10000, refreshMs: 3000, refreshTimeoutMs: 2000, marginMs: 1000 } */
  lease?: Partial<LeaseTiming>;
  /** How often discovery reads every descriptor again, the safety net for lost notifications. @default 5000 */
  fullReadIntervalMs?: number;
}

export type NormalizedStoreSource =
  | { readonly kind: 'redis'; readonly redis: string | Record<string, unknown> }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly unknown[];
      readonly options: Record<string, unknown> | undefined;
    }
  | { readonly kind: 'instance'; readonly instance: LocationStore };

export interface NormalizedLocationStore {
  readonly source: NormalizedStoreSource;
  readonly keyPrefix: string;
  readonly lease: LeaseTiming;
  readonly fullReadIntervalMs: number;
}

const STORE_KEYS = ['redis', 'cluster', 'instance', 'keyPrefix', 'lease', 'fullReadIntervalMs'];
const PORT_METHODS = ['put', 'refresh', 'remove', 'list', 'watch', 'close'] as const;

export function normalizeLocationStore(value: unknown): NormalizedLocationStore | undefined {
  if (value === undefined) return undefined;
  const field = 'locationStore';
  if (!isRecord(value))
    throw configurationError(field, 'must be an object { redis } | { cluster } | { instance }');
  checkKeys(field, value, STORE_KEYS);
  const given = (['redis', 'cluster', 'instance'] as const).filter((k) => value[k] !== undefined);
  if (given.length !== 1) {
    throw configurationError(
      field,
      given.length === 0
        ? 'names no store: give one of redis, cluster or instance'
        : `registers ${given.join(' and ')}; a process registers exactly one Location Store`,
    );
  }
  const keyPrefix = value.keyPrefix ?? 'zlink';
  if (typeof keyPrefix !== 'string' || keyPrefix.length === 0 || /[{}]/.test(keyPrefix))
    throw configurationError(`${field}.keyPrefix`, 'must be a non-empty string without { or }');
  return Object.freeze({
    source: normalizeSource(field, given[0] as 'redis' | 'cluster' | 'instance', value),
    keyPrefix,
    lease: normalizeLeaseTiming(`${field}.lease`, value.lease),
    fullReadIntervalMs: positiveInt(`${field}.fullReadIntervalMs`, value.fullReadIntervalMs, 5000),
  });
}

function normalizeSource(
  field: string,
  which: 'redis' | 'cluster' | 'instance',
  value: Record<string, unknown>,
): NormalizedStoreSource {
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
    case 'instance': {
      const instance = value.instance;
      const missing = PORT_METHODS.filter(
        (m) => !isRecord(instance) || typeof (instance as Record<string, unknown>)[m] !== 'function',
      );
      if (missing.length > 0)
        throw configurationError(
          `${field}.instance`,
          `must be a LocationStore (missing ${missing.join(', ')})`,
        );
      return { kind: 'instance', instance: instance as LocationStore };
    }
  }
}
