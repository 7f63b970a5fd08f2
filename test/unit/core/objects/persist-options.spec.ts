/**
 * A class's `persist` option (issue 54; lib/core/objects/persist-options.ts, docs/decisions.md#durable-state):
 * its shape and defaults when the class is registered, and the startup check against the `stateStores`
 * option — a persistent class needs `capture()` and `restore()` and a store it names, or the only one. Every
 * wrong value fails `Configuration` naming the field, `@Actor('player') Player options.persist.<key>`.
 */
import { describe, expect, it } from '@jest/globals';
import {
  type PersistOptions,
  type ZLinkOptions,
  ZLinkError,
  checkObjectClasses,
  normalizeOptions,
} from '../../../../lib/core/index.js';
import { MemoryLocationStore, MemoryStateStore } from '../../../../lib/store/index.js';
import { objectClass, objectMeshOptions, registry } from '../../../integration/spot/harness.js';
import { fieldOf } from '../config-error.js';

class Player {
  x = 0;
  capture(): { x: number } {
    return { x: this.x };
  }
  restore(state: { x: number }): void {
    this.x = state.x;
  }
}

class NoRestore {
  capture(): number {
    return 1;
  }
}

class NoHooks {}

const WHERE = "@Actor('player') Player options.persist";

function refusal(run: () => unknown): ZLinkError {
  try {
    run();
  } catch (error) {
    if (error instanceof ZLinkError && error.code === 'Configuration') return error;
    throw error;
  }
  throw new Error('expected a Configuration error');
}

const players = (persist: unknown, token: new () => object = Player) =>
  registry({
    ...objectClass('actor', 'player', token, ['move']),
    options: { persist: persist as PersistOptions },
  });

const store = new MemoryLocationStore();
const withStores = (...names: string[]): ZLinkOptions =>
  objectMeshOptions(store, 'server', 'srv', {
    stateStores: Object.fromEntries(names.map((n) => [n, { instance: new MemoryStateStore({ name: n }) }])),
  });
const check = (options: ZLinkOptions, persist: unknown, token?: new () => object) => () =>
  checkObjectClasses(normalizeOptions(options), players(persist, token));

describe('persist: shape and defaults', () => {
  it('defaults every field; a class without persist is not persistent', () => {
    expect(players({}).get('actor', 'player')?.options).toEqual({
      relocatable: false,
      persist: {
        store: undefined,
        mode: 'everyTurn',
        version: 1,
        migrate: undefined,
        maxBytes: 1 << 20,
        idleMs: undefined,
      },
    });
    expect(players(undefined).get('actor', 'player')?.options.persist).toBeUndefined();
  });

  it('keeps what it is given, at the edges of each range', () => {
    const migrate = (state: unknown) => state;
    for (const [maxBytes, idleMs] of [
      [1024, 1000],
      [64 << 20, 86_400_000],
    ])
      expect(
        players({ store: 'players', mode: 'explicit', version: 3, migrate, maxBytes, idleMs }).get(
          'actor',
          'player',
        )?.options.persist,
      ).toEqual({ store: 'players', mode: 'explicit', version: 3, migrate, maxBytes, idleMs });
  });

  it.each<[string, unknown, string]>([
    ['not an object', true, WHERE],
    ['an unknown key', { maxbytes: 1 }, `${WHERE}.maxbytes`],
    ['an empty store name', { store: '' }, `${WHERE}.store`],
    ['a store that is not a string', { store: 1 }, `${WHERE}.store`],
    ['another mode', { mode: 'always' }, `${WHERE}.mode`],
    ['version 0', { version: 0 }, `${WHERE}.version`],
    ['a fractional version', { version: 1.5 }, `${WHERE}.version`],
    ['a version as text', { version: '2' }, `${WHERE}.version`],
    ['migrate not a function', { migrate: 'v1' }, `${WHERE}.migrate`],
    ['maxBytes under 1 KiB', { maxBytes: 1023 }, `${WHERE}.maxBytes`],
    ['maxBytes over 64 MiB', { maxBytes: (64 << 20) + 1 }, `${WHERE}.maxBytes`],
    ['a fractional maxBytes', { maxBytes: 2048.5 }, `${WHERE}.maxBytes`],
    ['idleMs under 1000', { idleMs: 999 }, `${WHERE}.idleMs`],
    ['a fractional idleMs', { idleMs: 1000.5 }, `${WHERE}.idleMs`],
    ['idleMs not a number', { idleMs: '5s' }, `${WHERE}.idleMs`],
  ])('%s is refused, naming %s', (_what, persist, field) => {
    const e = refusal(() => players(persist));
    expect(fieldOf(e)).toBe(field);
    expect(e.message.startsWith(`${field}: `)).toBe(true);
  });
});

describe('persist: the startup check against stateStores', () => {
  it('passes with the store it names, or with none named and exactly one registered', () => {
    expect(check(withStores('players'), {})).not.toThrow();
    expect(check(withStores('players', 'rooms'), { store: 'rooms' })).not.toThrow();
    // A class that is not persistent needs no store.
    expect(check(withStores(), undefined)).not.toThrow();
  });

  it.each<[string, new () => object, string]>([
    ['without restore()', NoRestore, 'it has no restore()'],
    ['without capture() or restore()', NoHooks, 'it has no capture() and no restore()'],
  ])('a persistent class %s is refused, naming options.persist', (_what, token, text) => {
    const e = refusal(check(withStores('players'), {}, token));
    expect(fieldOf(e)).toBe(`@Actor('player') ${token.name} options.persist`);
    expect(e.message).toContain(text);
  });

  it('a store that is not registered is refused, naming persist.store and the registered ones', () => {
    const e = refusal(check(withStores('players', 'rooms'), { store: 'player' }));
    expect(fieldOf(e)).toBe(`${WHERE}.store`);
    expect(e.message).toContain(
      "'player' is not a key of the stateStores option (registered: players, rooms)",
    );
  });

  it('no store named while several are registered is refused, naming persist.store', () => {
    const e = refusal(check(withStores('players', 'rooms'), {}));
    expect(fieldOf(e)).toBe(`${WHERE}.store`);
    expect(e.message).toContain('stateStores has 2 entries (players, rooms)');
  });

  it('a persistent class with no State Store registered is refused, naming stateStores and the class', () => {
    for (const persist of [{}, { store: 'players' }]) {
      const e = refusal(check(withStores(), persist));
      expect(fieldOf(e)).toBe('stateStores');
      expect(e.message).toContain("@Actor('player') Player is persistent");
    }
  });
});
