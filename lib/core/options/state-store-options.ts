import { configurationError } from '../errors.js';
import { checkKeys, checkName, isRecord } from '../option-checks.js';
import type { StateStore } from '../ports/state-store.js';
import {
  type NormalizedStoreSource,
  type StoreConnectionOptions,
  checkInstance,
  checkKeyPrefix,
  normalizeRedisSource,
} from './store-options.js';

/**
 * The `stateStores` option: the State Stores persistent Spots and Actors may keep their state in, by name
 * (`@Spot(type, { persist: { store: '<name>' } })`; docs/decisions.md#durable-state). Only shapes are
 * checked here; which class uses which store is checked with the classes (`checkObjectClasses`), and
 * `lib/store` builds the stores (`createStateStore`).
 */

/** One State Store: exactly one of `instance`, `redis`, `cluster` or `postgres`. */
export interface StateStoreOptions extends StoreConnectionOptions {
  /**
   * PostgreSQL, through the `pg` package (install it: an optional peer dependency): a `postgres://` URL,
   * or the `PostgresStateStore` options (`connectionString` or `host`/`port`/`database`/`user`/`password`,
   * `ssl`, `table`, `poolSize`, ...). One table, created at start when absent. See
   * docs/configuration.md#statestores.
   */
  postgres?: string | Record<string, unknown>;
  /**
   * A store object of your own making, e.g. `new MemoryStateStore()` (in one process, for tests); the
   * framework never builds one unasked.
   */
  instance?: StateStore;
  /**
   * With `redis` or `cluster`: keeps its rows apart from other stores on a shared Redis. Must differ from
   * `locationStore.keyPrefix`, `relocationStore.keyPrefix` and every other State Store's.
   * @default 'zlink-state'
   */
  keyPrefix?: string;
}

/** Where a State Store lives: an instance, or a Redis (standalone, Sentinel or Cluster) and a key prefix. */
export type NormalizedStateStoreSource =
  | { readonly kind: 'instance'; readonly instance: StateStore }
  /** Checked whole by the store when it is built (`lib/store`), its errors naming `stateStores.<name>.postgres`. */
  | { readonly kind: 'postgres'; readonly options: Readonly<Record<string, unknown>> }
  | (Exclude<NormalizedStoreSource<never>, { kind: 'instance' }> & { readonly keyPrefix: string });

export interface NormalizedStateStore {
  /** The key it was registered under: what `persist.store` names. */
  readonly name: string;
  readonly source: NormalizedStateStoreSource;
}

/** The sources of one State Store, exactly one of which is given. */
const SOURCES = ['instance', 'redis', 'cluster', 'postgres'] as const;
const KEYS = [...SOURCES, 'keyPrefix'];
const METHODS = ['start', 'adopt', 'write', 'close'];
const DEFAULT_PREFIX = 'zlink-state';

/**
 * The `stateStores` option: an object keyed by store name, each entry `{ instance }`, `{ redis, keyPrefix? }`,
 * `{ cluster, keyPrefix? }` or `{ postgres }`. One store object under two names is refused (its batches would compete as
 * two stores), and so is a key prefix that `prefixesTaken` holds (prefix → the field that has it: the
 * Location and Relocation Stores') or that another State Store on Redis has: stores may share a Redis,
 * never a key prefix.
 */
export function normalizeStateStores(
  value: unknown,
  prefixesTaken: ReadonlyMap<string, string> = new Map(),
): ReadonlyMap<string, NormalizedStateStore> {
  const out = new Map<string, NormalizedStateStore>();
  if (value === undefined) return out;
  if (!isRecord(value)) throw configurationError('stateStores', 'must be an object keyed by store name');
  const prefixes = new Map(prefixesTaken);
  for (const [name, entry] of Object.entries(value)) {
    const field = `stateStores.${name}`;
    checkName(field, name);
    if (!isRecord(entry))
      throw configurationError(
        field,
        'must be an object { instance } | { redis } | { cluster } | { postgres }',
      );
    checkKeys(field, entry, KEYS);
    const given = SOURCES.filter((k) => entry[k] !== undefined);
    if (given.length !== 1)
      throw configurationError(
        field,
        given.length === 0
          ? 'names no store: give one of instance, redis, cluster or postgres'
          : `gives ${given.join(' and ')}; a State Store has exactly one`,
      );
    const which = given[0]!;
    let source: NormalizedStateStoreSource;
    switch (which) {
      case 'instance':
        source = instanceSource(field, entry, out);
        break;
      case 'postgres':
        source = postgresSource(field, entry);
        break;
      case 'redis':
      case 'cluster': {
        const keyPrefix = checkKeyPrefix(`${field}.keyPrefix`, entry.keyPrefix, DEFAULT_PREFIX);
        const holder = prefixes.get(keyPrefix);
        if (holder !== undefined)
          throw configurationError(
            `${field}.keyPrefix`,
            `'${keyPrefix}' is ${holder} too; stores may share a Redis, never a key prefix`,
          );
        prefixes.set(keyPrefix, `${field}.keyPrefix`);
        source = Object.freeze({ ...normalizeRedisSource(field, which, entry), keyPrefix });
        break;
      }
    }
    out.set(name, Object.freeze({ name, source }));
  }
  return out;
}

/** A `postgres` source: a URL, or options the store checks whole when it is built. */
function postgresSource(field: string, entry: Record<string, unknown>): NormalizedStateStoreSource {
  if (entry.keyPrefix !== undefined)
    throw configurationError(
      `${field}.keyPrefix`,
      'goes with redis or cluster; PostgreSQL rows live in postgres.table',
    );
  const { postgres } = entry;
  if (typeof postgres === 'string') {
    if (postgres.length === 0)
      throw configurationError(`${field}.postgres`, 'must be a non-empty postgres:// URL');
    return Object.freeze({
      kind: 'postgres' as const,
      options: Object.freeze({ connectionString: postgres }),
    });
  }
  if (!isRecord(postgres))
    throw configurationError(`${field}.postgres`, 'must be a postgres:// URL or PostgresStateStore options');
  return Object.freeze({ kind: 'postgres' as const, options: Object.freeze({ ...postgres }) });
}

/** An `instance` source: a StateStore by its shape, not registered under another name already. */
function instanceSource(
  field: string,
  entry: Record<string, unknown>,
  registered: ReadonlyMap<string, NormalizedStateStore>,
): NormalizedStateStoreSource {
  if (entry.keyPrefix !== undefined)
    throw configurationError(
      `${field}.keyPrefix`,
      'goes with redis or cluster; an instance keeps its own rows',
    );
  const instance = checkInstance<StateStore>(`${field}.instance`, 'StateStore', METHODS, entry.instance);
  checkStoreFields(`${field}.instance`, instance);
  const twin = [...registered.values()].find(
    (s) => s.source.kind === 'instance' && s.source.instance === instance,
  );
  if (twin)
    throw configurationError(
      `${field}.instance`,
      `is stateStores.${twin.name}.instance too; register one store object under one name`,
    );
  return Object.freeze({ kind: 'instance' as const, instance });
}

/** The port's fields besides its methods: what a batcher sizes its batches by, and the name messages use. */
function checkStoreFields(field: string, store: StateStore): void {
  if (typeof store.name !== 'string' || store.name.length === 0)
    throw configurationError(`${field}.name`, 'must be a non-empty string (it names the store in messages)');
  for (const key of ['batchLimit', 'concurrency'] as const)
    if (!Number.isSafeInteger(store[key]) || store[key] < 1)
      throw configurationError(`${field}.${key}`, `must be an integer >= 1, got ${String(store[key])}`);
}
