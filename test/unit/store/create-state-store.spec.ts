/**
 * `createStateStore` (lib/store/create-state-store.ts): what a normalized `stateStores` entry builds. A
 * Redis source becomes a `RedisStateStore` named after its entry, under its key prefix, owned by the
 * runtime and not connected yet; an instance stays its maker's.
 */
import { describe, expect, it } from '@jest/globals';
import { type NormalizedStateStore, normalizeOptions } from '../../../lib/core/index.js';
import { MemoryStateStore, createStateStore } from '../../../lib/store/index.js';
import { RedisStateStore } from '../../../lib/store/redis/redis-state-store.js';

describe('createStateStore', () => {
  it('builds a Redis State Store from redis or cluster, owned; hands an instance back, not owned', async () => {
    const memory = new MemoryStateStore();
    const { stateStores } = normalizeOptions({
      stateStores: {
        players: { redis: 'redis://:s3cret@127.0.0.1:1', keyPrefix: 'game-state' },
        rooms: { cluster: { nodes: [{ host: '127.0.0.1', port: 1 }] } },
        local: { instance: memory },
      },
    });
    const built = await Promise.all([...stateStores.values()].map((s) => createStateStore(s)));
    try {
      expect(built.map(({ store, owned }) => [store.constructor.name, store.name, owned])).toEqual([
        ['RedisStateStore', "State Store 'players' (Redis 127.0.0.1:1 prefix game-state)", true],
        ['RedisStateStore', "State Store 'rooms' (Redis cluster 127.0.0.1:1 prefix zlink-state)", true],
        ['MemoryStateStore', "State Store 'memory' (memory)", false],
      ]);
      expect(built[0]!.store).toBeInstanceOf(RedisStateStore);
      expect(built[2]!.store).toBe(memory);
    } finally {
      // Nothing was connected (a store connects at start()), so closing is all there is to do.
      await Promise.all(built.filter((b) => b.owned).map((b) => b.store.close()));
    }
  });

  it('builds a PostgreSQL State Store from postgres, owned, its errors naming the option', async () => {
    const { stateStores } = normalizeOptions({
      stateStores: {
        players: { postgres: 'postgres://game@127.0.0.1:1/game' },
        rooms: { postgres: { host: '127.0.0.1', port: 1, database: 'game', table: 'game.rooms' } },
        bad: { postgres: { table: 'Rooms!' } },
      },
    });
    const [players, rooms, bad] = [...stateStores.values()] as [
      NormalizedStateStore,
      NormalizedStateStore,
      NormalizedStateStore,
    ];
    const built = await Promise.all([players, rooms].map((s) => createStateStore(s)));
    try {
      expect(built.map(({ store, owned }) => [store.constructor.name, store.name, owned])).toEqual([
        ['PostgresStateStore', "State Store 'players' (PostgreSQL game/zlink_state)", true],
        ['PostgresStateStore', "State Store 'rooms' (PostgreSQL game/game.rooms)", true],
      ]);
    } finally {
      await Promise.all(built.map((b) => b.store.close()));
    }
    await expect(createStateStore(bad)).rejects.toMatchObject({
      code: 'Configuration',
      message: expect.stringMatching(/stateStores\.bad\.postgres\.table/),
    });
  });
});
