/** What the store suites share: a sample Server descriptor and one private redis-server per file. */
import { afterAll, beforeAll } from '@jest/globals';
import type { ServerDescriptor } from '../../../lib/core/index.js';
import { RedisServer } from '../../helpers/redis-server.js';

export function serverDescriptor(overrides: Partial<ServerDescriptor> = {}): ServerDescriptor {
  return {
    kind: 'server',
    channel: 'billing',
    rid: 'billing-a',
    generation: 'g1',
    endpoint: 'tcp://10.0.0.1:7200',
    weight: 100,
    draining: false,
    revision: 1,
    ...overrides,
  };
}

/** Starts a redis-server before the file's tests and kills it after; read `.current` inside tests. */
export function useRedis(): { current: RedisServer } {
  const holder = {} as { current: RedisServer };
  beforeAll(async () => {
    holder.current = await RedisServer.start();
  });
  afterAll(() => holder.current?.stop());
  return holder;
}
