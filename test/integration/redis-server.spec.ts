/**
 * The test's own Redis (docs/architecture.md#how-we-test): a private `redis-server` on a free port that a test can kill
 * and start again — the groundwork the Location Store tests (issue 5) stand on.
 */
import { closeRedisClient } from '../../lib/store/redis/client.js';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Cleanup, outcome } from '../helpers/index.js';
import { RedisServer } from '../helpers/redis-server.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('a private redis-server for tests', () => {
  it('starts on a free port, can be killed (commands fail) and started again on the same port, empty', async () => {
    const server = cleanup.add(await RedisServer.start());
    const redis = server.client();
    try {
      await redis.set('k', 'v');
      expect(await redis.get('k')).toBe('v');
      await server.stop();
      expect(server.running).toBe(false);
      expect((await outcome(redis.get('k'))).ok).toBe(false);
      await server.restart();
      const again = server.client();
      try {
        expect(await again.get('k')).toBeNull();
      } finally {
        await closeRedisClient(again);
      }
    } finally {
      await closeRedisClient(redis);
    }
  });
});
