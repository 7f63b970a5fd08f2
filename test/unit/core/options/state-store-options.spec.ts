/**
 * The `stateStores` option (issue 54; lib/core/options/state-store-options.ts): State Stores by name, each
 * `{ instance }`, `{ redis, keyPrefix? }`, `{ cluster, keyPrefix? }` or `{ postgres }`; a wrong shape
 * fails `Configuration` naming the field, and so does a key prefix another store on Redis has.
 */
import { describe, expect, it } from '@jest/globals';
import { normalizeOptions } from '../../../../lib/core/index.js';
import { MemoryLocationStore, MemoryStateStore } from '../../../../lib/store/index.js';
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

  it('takes a Redis URL or ioredis options, or a Cluster, each under zlink-state unless keyPrefix says', () => {
    const nodes = [{ host: '10.0.0.1', port: 7000 }];
    const o = normalizeOptions({
      stateStores: {
        players: { redis: 'redis://state-1:6379' },
        rooms: { redis: { host: 'state-2', password: 'p' }, keyPrefix: 'rooms-state' },
        zones: { cluster: { nodes, options: { scaleReads: 'master' } }, keyPrefix: 'zones-state' },
      },
    });
    expect([...o.stateStores.values()]).toEqual([
      { name: 'players', source: { kind: 'redis', redis: 'redis://state-1:6379', keyPrefix: 'zlink-state' } },
      {
        name: 'rooms',
        source: { kind: 'redis', redis: { host: 'state-2', password: 'p' }, keyPrefix: 'rooms-state' },
      },
      {
        name: 'zones',
        source: { kind: 'cluster', nodes, options: { scaleReads: 'master' }, keyPrefix: 'zones-state' },
      },
    ]);
  });

  it('takes PostgreSQL as a URL or as options, checked whole by the store when it is built', () => {
    const stores = normalizeOptions({
      stateStores: {
        players: { postgres: 'postgres://game@db:5432/game' },
        rooms: { postgres: { host: 'db', database: 'game', table: 'game.rooms_state', poolSize: 8 } },
      },
    }).stateStores;
    expect(stores.get('players')?.source).toEqual({
      kind: 'postgres',
      options: { connectionString: 'postgres://game@db:5432/game' },
    });
    expect(stores.get('rooms')?.source).toEqual({
      kind: 'postgres',
      options: { host: 'db', database: 'game', table: 'game.rooms_state', poolSize: 8 },
    });
  });

  it('may share a Redis with the Location and Relocation Stores under a key prefix of its own', () => {
    const o = normalizeOptions({
      locationStore: { redis: 'redis://r:6379' },
      relocationStore: { redis: 'redis://r:6379' },
      stateStores: { players: { redis: 'redis://r:6379' } },
    });
    expect(o.stateStores.get('players')?.source).toMatchObject({ keyPrefix: 'zlink-state' });
    // A Location Store given as an instance keeps no keys under its prefix.
    const memory = normalizeOptions({
      locationStore: { instance: new MemoryLocationStore(), keyPrefix: 'p' },
      stateStores: { players: { redis: 'redis://r:6379', keyPrefix: 'p' } },
    });
    expect(memory.stateStores.size).toBe(1);
  });

  const store = () => new MemoryStateStore();
  const twice = store();
  it.each<[string, unknown, string]>([
    ['not an object', 'memory', 'stateStores'],
    ['an entry that is not an object', { players: true }, 'stateStores.players'],
    ['an empty name', { '': { instance: store() } }, 'stateStores.'],
    ['an empty postgres URL', { players: { postgres: '' } }, 'stateStores.players.postgres'],
    [
      'postgres that is neither URL nor options',
      { players: { postgres: 5432 } },
      'stateStores.players.postgres',
    ],
    [
      'a key prefix beside postgres',
      { players: { postgres: 'postgres://db/game', keyPrefix: 'p' } },
      'stateStores.players.keyPrefix',
    ],
    ['no source', { players: {} }, 'stateStores.players'],
    ['two sources', { players: { instance: store(), redis: 'redis://h' } }, 'stateStores.players'],
    ['a URL that is not redis://', { players: { redis: 'http://h' } }, 'stateStores.players.redis'],
    ['ioredis options that are no object', { players: { redis: 6379 } }, 'stateStores.players.redis'],
    ['a cluster without nodes', { players: { cluster: { nodes: [] } } }, 'stateStores.players.cluster'],
    [
      'cluster options that are no object',
      { players: { cluster: { nodes: ['h:7000'], options: 'x' } } },
      'stateStores.players.cluster.options',
    ],
    [
      'a key prefix with a {',
      { players: { redis: 'redis://h', keyPrefix: 'a{b}' } },
      'stateStores.players.keyPrefix',
    ],
    [
      'an empty key prefix',
      { players: { redis: 'redis://h', keyPrefix: '' } },
      'stateStores.players.keyPrefix',
    ],
    [
      'a key prefix beside an instance',
      { players: { instance: store(), keyPrefix: 'p' } },
      'stateStores.players.keyPrefix',
    ],
    [
      'two State Stores on one key prefix',
      { players: { redis: 'redis://a' }, rooms: { cluster: { nodes: ['b:7000'] } } },
      'stateStores.rooms.keyPrefix',
    ],
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

  it.each<[string, Record<string, unknown>, string]>([
    [
      'the Location Store',
      { locationStore: { redis: 'redis://r', keyPrefix: 'p' } },
      'locationStore.keyPrefix',
    ],
    [
      'the Relocation Store',
      {
        locationStore: { redis: 'redis://r' },
        relocationStore: { cluster: { nodes: ['r:7000'] }, keyPrefix: 'p' },
      },
      'relocationStore.keyPrefix',
    ],
  ])('a key prefix %s has is refused, naming both', (_what, stores, holder) => {
    const error = configError({
      ...stores,
      stateStores: { players: { redis: 'redis://r', keyPrefix: 'p' } },
    });
    expect(fieldOf(error)).toBe('stateStores.players.keyPrefix');
    expect(error.message).toContain(holder);
  });
});
