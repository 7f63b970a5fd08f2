/**
 * A Location Store that cannot be reached (issue 51): every failure names the store (its URL
 * without the password, its key prefix) and why (the connection's own error as `cause`), and a
 * runtime's `start()` waits for the store's first answer, bounded by `locationStore.startupTimeoutMs`,
 * instead of starting without it. Ports nothing listens on come from the OS; a real redis-server is
 * the store that is up.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { RedisAuthorityStore } from '../../../lib/store/redis/redis-object-stores.js';
import { Cleanup, EventCollector, freePort, outcome } from '../../helpers/index.js';
import { serverDescriptor, useRedis } from './fixtures.js';

const redis = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/** A URL with a password, on a port nothing listens on. */
async function deadUrl(): Promise<{ url: string; port: number }> {
  const port = await freePort();
  return { url: `redis://:s3cret@127.0.0.1:${port}`, port };
}

function expectNamed(error: unknown, port: number, prefix: string): void {
  const message = (error as Error).message;
  expect(message).toContain(`redis://127.0.0.1:${port}`);
  expect(message).toContain(`key prefix '${prefix}'`);
  expect(message).toContain('ECONNREFUSED');
  expect(message).not.toContain('s3cret');
}

describe('a Redis store nothing answers', () => {
  it('Location Store and Authority Store failures name the store and carry ECONNREFUSED as cause', async () => {
    const { url, port } = await deadUrl();
    const location = cleanup.add(new RedisLocationStore({ redis: url, keyPrefix: 'ops' }));
    const authority = cleanup.add(new RedisAuthorityStore({ redis: url, keyPrefix: 'ops' }));
    const listed = await outcome(location.list('server', 'billing'));
    const put = await outcome(location.put(serverDescriptor(), 1000));
    const got = await outcome(authority.get({ mesh: 'game', kind: 'spot', id: 'room-1' }));
    for (const r of [listed, put, got]) {
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expectNamed(r.error, port, 'ops');
      expect(((r.error as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
    }
    expect((listed as { error: Error }).error.message).toMatch(/^Location Store /);
    expect((got as { error: Error }).error.message).toMatch(/^Authority Store /);
  });

  it('start() fails with Unavailable within locationStore.startupTimeoutMs, naming the store and the cause', async () => {
    const { url, port } = await deadUrl();
    const runtime = cleanup.add(
      new ZLinkRuntime({
        clientServer: { billing: { server: { listen: { bindHost: '127.0.0.1' } } } },
        locationStore: { redis: url, keyPrefix: 'ops', startupTimeoutMs: 1000 },
      }),
    );
    const started = await outcome(runtime.start());
    expect(started).toMatchObject({ ok: false, code: 'Unavailable' });
    const error = (started as { error: Error }).error;
    expectNamed(error, port, 'ops');
    expect(error.message).toContain('locationStore.startupTimeoutMs');
    expect(((error.cause as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
    // Bounded by the option, not by ioredis's own retries (generous: a loaded 2-core machine).
    expect(started.ms).toBeLessThan(8000);
  });

  it('startupTimeoutMs 0: start() does not wait (the store is found once it answers)', async () => {
    const { url } = await deadUrl();
    const runtime = cleanup.add(
      new ZLinkRuntime({
        clientServer: { billing: { server: { listen: { bindHost: '127.0.0.1' } } } },
        locationStore: { redis: url, keyPrefix: 'ops', startupTimeoutMs: 0 },
      }),
    );
    await runtime.start();
  });

  it('a store that is up: start() resolves after its first answer, and reports no store failure', async () => {
    const runtime = cleanup.add(
      new ZLinkRuntime({
        clientServer: { billing: { server: { listen: { bindHost: '127.0.0.1' } } } },
        locationStore: { redis: redis.current.url, keyPrefix: 'ops-up', startupTimeoutMs: 5000 },
      }),
    );
    const events = cleanup.add(new EventCollector(runtime.events));
    await runtime.start();
    expect(await runtime.checkStore(2000)).toMatchObject({ answers: true });
    // A connection still opening while start() asks is no outage: nothing says `store` failing.
    expect(events.of('store')).toEqual([]);
  });
});
