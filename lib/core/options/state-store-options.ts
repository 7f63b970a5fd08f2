import { configurationError } from '../errors.js';
import { checkKeys, checkName, isRecord } from '../option-checks.js';
import type { StateStore } from '../ports/state-store.js';
import { checkInstance } from './store-options.js';

/**
 * The `stateStores` option: the State Stores persistent Spots and Actors may keep their state in, by name
 * (`@Spot(type, { persist: { store: '<name>' } })`; docs/decisions.md#durable-state). Only shapes are
 * checked here; which class uses which store is checked with the classes (`checkObjectClasses`).
 */

/** One State Store. */
export interface StateStoreOptions {
  /**
   * A store object of your own making, e.g. `new MemoryStateStore()` (in one process, for tests); the
   * framework never builds one unasked.
   */
  instance?: StateStore;
}

export interface NormalizedStateStore {
  /** The key it was registered under: what `persist.store` names. */
  readonly name: string;
  readonly source: { readonly kind: 'instance'; readonly instance: StateStore };
}

const KEYS = ['instance'];
const METHODS = ['start', 'adopt', 'write', 'close'];

/**
 * The `stateStores` option: an object keyed by store name, each entry `{ instance }` (the PostgreSQL and
 * Redis providers are not part of the package yet, so their keys are refused as unknown). One store
 * object under two names is refused: its batches would compete as two stores.
 */
export function normalizeStateStores(value: unknown): ReadonlyMap<string, NormalizedStateStore> {
  const out = new Map<string, NormalizedStateStore>();
  if (value === undefined) return out;
  if (!isRecord(value)) throw configurationError('stateStores', 'must be an object keyed by store name');
  for (const [name, entry] of Object.entries(value)) {
    const field = `stateStores.${name}`;
    checkName(field, name);
    if (!isRecord(entry)) throw configurationError(field, 'must be an object { instance }');
    checkKeys(field, entry, KEYS);
    if (entry.instance === undefined)
      throw configurationError(`${field}.instance`, 'names no store: give instance, a StateStore');
    const instance = checkInstance<StateStore>(`${field}.instance`, 'StateStore', METHODS, entry.instance);
    checkStoreFields(`${field}.instance`, instance);
    const twin = [...out.values()].find((s) => s.source.instance === instance);
    if (twin)
      throw configurationError(
        `${field}.instance`,
        `is stateStores.${twin.name}.instance too; register one store object under one name`,
      );
    out.set(name, Object.freeze({ name, source: Object.freeze({ kind: 'instance' as const, instance }) }));
  }
  return out;
}

/** The port's fields besides its methods: what a batcher sizes its batches by, and the name messages use. */
function checkStoreFields(field: string, store: StateStore): void {
  if (typeof store.name !== 'string' || store.name.length === 0)
    throw configurationError(`${field}.name`, 'must be a non-empty string (it names the store in messages)');
  for (const key of ['batchLimit', 'concurrency'] as const)
    if (!Number.isSafeInteger(store[key]) || store[key] < 1)
      throw configurationError(`${field}.${key}`, `must be an integer >= 1, got ${String(store[key])}`);
}
