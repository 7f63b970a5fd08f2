import { configurationError } from '../errors.js';
import { checkKeys, isRecord } from '../option-checks.js';

/**
 * A class's `persist` option (`@Spot(type, { persist })` / `@Actor`): the class's objects keep their state in
 * a State Store (docs/decisions.md#durable-state). What is saved is what `capture()` returns, and it comes
 * back through `restore(state, ctx)`, so a persistent class needs both. Checked in two places: its shape
 * here, when the class is declared; the store it names and its hooks by `checkObjectClasses` at startup.
 * Every wrong value is `Configuration` naming the field, `@Actor('player') Player options.persist.<key>`.
 */

/** When state is written: after every turn that changed it, or when the object asks. */
export type PersistMode = 'everyTurn' | 'explicit';

export interface PersistOptions {
  /**
   * The State Store, by its key in the runtime's `stateStores` option.
   * @default the only one configured (with none or several, it must be named)
   */
  readonly store?: string;
  /**
   * `'everyTurn'`: written after every turn that changed it. `'explicit'`: written when the object asks.
   * @default 'everyTurn'
   */
  readonly mode?: PersistMode;
  /** The schema version of what `capture()` returns: an integer >= 1. @default 1 */
  readonly version?: number;
  /**
   * Brings state saved under an older `version` up by one: `migrate(state, from)` returns the state as
   * version `from + 1` has it; called once per version between the saved one and `version`.
   * @default none (state of an older version cannot be restored)
   */
  readonly migrate?: (state: unknown, from: number) => unknown;
  /** The most bytes one saved state may take (msgpack), 1 KiB to 64 MiB. @default 1048576 (1 MiB) */
  readonly maxBytes?: number;
  /** After how many ms without work an object is saved and deactivated; an integer >= 1000. @default never */
  readonly idleMs?: number;
}

/** The option as the runtime reads it: every field set (`store`, `migrate`, `idleMs` may stay unset). */
export interface NormalizedPersistOptions {
  /** As given: `checkObjectClasses` resolves it against `stateStores` (see `persistStoreOf`). */
  readonly store: string | undefined;
  readonly mode: PersistMode;
  readonly version: number;
  readonly migrate: ((state: unknown, from: number) => unknown) | undefined;
  readonly maxBytes: number;
  readonly idleMs: number | undefined;
}

export const DEFAULT_PERSIST_MAX_BYTES = 1 << 20;
export const MIN_PERSIST_MAX_BYTES = 1 << 10;
export const MAX_PERSIST_MAX_BYTES = 64 << 20;
export const MIN_PERSIST_IDLE_MS = 1000;

const KEYS = ['store', 'mode', 'version', 'migrate', 'maxBytes', 'idleMs'];
const MODES: readonly PersistMode[] = ['everyTurn', 'explicit'];

/** `value` unless it is not an integer in `[min, max]`; then `Configuration` naming `field`. */
function intIn(field: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max)
    throw configurationError(
      field,
      `must be an integer ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}, got ${String(value)}`,
    );
  return value;
}

/** How errors name a class's option: `@Actor('player') Player options.persist`. */
const fieldOf = (where: string): string => `${where} options.persist`;

/**
 * The `persist` option of the class `where` names (`@Actor('player') Player`), checked and defaulted;
 * `undefined` (not persistent) when `value` is.
 */
export function normalizePersistOptions(where: string, value: unknown): NormalizedPersistOptions | undefined {
  if (value === undefined) return undefined;
  const field = fieldOf(where);
  if (!isRecord(value)) throw configurationError(field, 'must be an object { store?, mode?, version?, ... }');
  checkKeys(field, value, KEYS);
  const {
    store,
    mode = 'everyTurn',
    version = 1,
    migrate,
    maxBytes = DEFAULT_PERSIST_MAX_BYTES,
    idleMs,
  } = value;
  if (store !== undefined && (typeof store !== 'string' || store.length === 0))
    throw configurationError(`${field}.store`, 'must be a non-empty string, a key of the stateStores option');
  if (!MODES.includes(mode as PersistMode))
    throw configurationError(`${field}.mode`, `must be 'everyTurn' or 'explicit', got ${String(mode)}`);
  if (migrate !== undefined && typeof migrate !== 'function')
    throw configurationError(`${field}.migrate`, 'must be a function (state, from) => state');
  return Object.freeze({
    store,
    mode: mode as PersistMode,
    version: intIn(`${field}.version`, version, 1),
    migrate: migrate as NormalizedPersistOptions['migrate'],
    maxBytes: intIn(`${field}.maxBytes`, maxBytes, MIN_PERSIST_MAX_BYTES, MAX_PERSIST_MAX_BYTES),
    idleMs: idleMs === undefined ? undefined : intIn(`${field}.idleMs`, idleMs, MIN_PERSIST_IDLE_MS),
  });
}

/**
 * The State Store the persistent class `where` uses: the one `persist.store` names, or the only one
 * registered when it names none. `Configuration` naming `<where> options.persist.store` when it names no
 * registered store or must name one (several are), and `stateStores` when none is registered.
 */
export function persistStoreOf(
  where: string,
  persist: NormalizedPersistOptions,
  stateStores: ReadonlyMap<string, unknown>,
): string {
  const names = [...stateStores.keys()];
  const field = fieldOf(where);
  if (names.length === 0)
    throw configurationError(
      'stateStores',
      `${where} is persistent (options.persist): register a State Store in the stateStores option`,
    );
  if (persist.store === undefined) {
    if (names.length === 1) return names[0] as string;
    throw configurationError(
      `${field}.store`,
      `stateStores has ${names.length} entries (${names.join(', ')}): name the one this class uses`,
    );
  }
  if (!stateStores.has(persist.store))
    throw configurationError(
      `${field}.store`,
      `'${persist.store}' is not a key of the stateStores option (registered: ${names.join(', ')})`,
    );
  return persist.store;
}

/**
 * The startup check of the persistent class `where`: its `capture()` and `restore()` methods (`hooks`), then
 * its store (see `persistStoreOf`); `Configuration` naming `<where> options.persist` or the store's field.
 */
export function checkPersistentClass(
  where: string,
  persist: NormalizedPersistOptions,
  hooks: { readonly capture: boolean; readonly restore: boolean },
  stateStores: ReadonlyMap<string, unknown>,
): void {
  const missing = (['capture', 'restore'] as const).filter((hook) => !hooks[hook]);
  if (missing.length > 0)
    throw configurationError(
      fieldOf(where),
      `a persistent class saves what capture() returns and restores it through restore(state, ctx); it has no ${missing.map((m) => `${m}()`).join(' and no ')}`,
    );
  persistStoreOf(where, persist, stateStores);
}
