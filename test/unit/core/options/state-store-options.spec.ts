/**
 * The `stateStores` option (issue 54; lib/core/options/state-store-options.ts): State Stores by name, each
 * `{ instance }` for now; a wrong shape fails `Configuration` naming the field.
 */
import { describe, expect, it } from '@jest/globals';
import { normalizeOptions } from '../../../../lib/core/index.js';
import { MemoryStateStore } from '../../../../lib/store/index.js';
import { configError, fieldOf } from '../config-error.js';

describe('stateStores', () => {
  it('is empty when not given; keeps each instance under its name', () => {
    expect(normalizeOptions({}).stateStores.size).toBe(0);
    const players = new MemoryStateStore({ name: 'players' });
    const rooms = new MemoryStateStore({ name: 'rooms' });
    const o = normalizeOptions({
      stateStores: { players: { instance: players }, rooms: { instance: rooms } },
    });
    expect([...o.stateStores.values()]).toEqual([
      { name: 'players', source: { kind: 'instance', instance: players } },
      { name: 'rooms', source: { kind: 'instance', instance: rooms } },
    ]);
  });

  const store = () => new MemoryStateStore();
  const twice = store();
  it.each<[string, unknown, string]>([
    ['not an object', 'memory', 'stateStores'],
    ['an entry that is not an object', { players: true }, 'stateStores.players'],
    ['an empty name', { '': { instance: store() } }, 'stateStores.'],
    [
      'a provider not built into the package',
      { players: { postgres: 'postgres://db' } },
      'stateStores.players.postgres',
    ],
    ['a Redis provider', { players: { redis: 'redis://h' } }, 'stateStores.players.redis'],
    ['no instance', { players: {} }, 'stateStores.players.instance'],
    [
      'an instance that is no State Store',
      { players: { instance: { adopt: () => [] } } },
      'stateStores.players.instance',
    ],
    [
      'an instance without a name',
      { players: { instance: Object.assign(store(), { name: '' }) } },
      'stateStores.players.instance.name',
    ],
    [
      'an instance with a batchLimit of 0',
      { players: { instance: Object.assign(store(), { batchLimit: 0 }) } },
      'stateStores.players.instance.batchLimit',
    ],
    [
      'an instance with a fractional concurrency',
      { players: { instance: Object.assign(store(), { concurrency: 1.5 }) } },
      'stateStores.players.instance.concurrency',
    ],
    [
      'one instance under two names',
      { players: { instance: twice }, rooms: { instance: twice } },
      'stateStores.rooms.instance',
    ],
  ])('%s is refused, naming %s', (_what, stateStores, field) => {
    expect(fieldOf(configError({ stateStores }))).toBe(field);
  });
});
