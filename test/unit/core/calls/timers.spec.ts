/**
 * A deadline judged after the loop read its sockets: a real redis-server answers a PING at once while
 * this process's loop is held busy past the deadline (as a synchronous burst of calls holds it), so
 * the answer is in the socket when the timer fires. The first test shows the trap is real.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { answerWithin } from '../../../../lib/core/index.js';
import { closeRedisClient } from '../../../../lib/store/redis/client.js';
import { RedisServer } from '../../../helpers/redis-server.js';

/** Holds the loop for `ms`: no timer, no I/O callback runs meanwhile. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

describe('answerWithin (core timers)', () => {
  let server: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url, { lazyConnect: true });
    await redis.connect();
  });
  afterAll(async () => {
    if (redis) await closeRedisClient(redis);
    await server?.stop();
  });

  it('a plain race with a timer calls an answer that came in time late, when the loop was held', async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((done) => (timer = setTimeout(() => done('late'), 20)));
    const ping = redis.ping();
    busy(200);
    await expect(Promise.race([ping, late])).resolves.toBe('late');
    clearTimeout(timer);
  });

  it('the same answer, judged after the I/O that arrived meanwhile, is on time', async () => {
    let lateCalls = 0;
    const ping = answerWithin(redis.ping(), 20, () => {
      lateCalls++;
      return 'late';
    });
    busy(200);
    await expect(ping).resolves.toBe('PONG');
    expect(lateCalls).toBe(0);
  });

  it('an answer that did not come is late: what late returns resolves, what it throws rejects', async () => {
    server.signal('SIGSTOP');
    try {
      await expect(answerWithin(redis.ping(), 50, () => 'late')).resolves.toBe('late');
      await expect(
        answerWithin(redis.ping(), 50, () => {
          throw new Error('no answer within 50 ms');
        }),
      ).rejects.toThrow('no answer within 50 ms');
    } finally {
      server.signal('SIGCONT');
    }
    // The operation went on and answers once the store is back; a verdict already given stays.
    await expect(redis.ping()).resolves.toBe('PONG');
  });

  it("the operation's own rejection passes through, and after a verdict a late outcome changes nothing", async () => {
    await expect(answerWithin(Promise.reject(new Error('ECONNRESET')), 50, () => 'late')).rejects.toThrow(
      'ECONNRESET',
    );
    let answer!: (v: string) => void;
    const slow = new Promise<string>((done) => (answer = done));
    const judged = answerWithin(slow, 10, () => 'late');
    await expect(judged).resolves.toBe('late');
    answer('PONG');
    await expect(judged).resolves.toBe('late');
  });
});
