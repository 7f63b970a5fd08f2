/**
 * "Up" means up (issue 51), in child processes: a Nest microservice whose Location Store cannot be
 * reached never says it started; its `listen()` fails once `locationStore.startupTimeoutMs` passed,
 * naming the store (URL without the password) and the cause. With a redis-server that is up, it
 * starts and says so.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ChildApp } from '../helpers/child-app.js';
import { Cleanup, freePort } from '../helpers/index.js';
import { RedisServer } from '../helpers/redis-server.js';

const APP = 'e2e/store-startup.app.js';
const started = (app: ChildApp) =>
  app.logs.filter((m) => /successfully started/.test(String(m.message))).map((m) => m.message);

/** A child app that is killed (if still running) when the test ends. */
function start(cleanup: Cleanup, name: string, args: Record<string, unknown>): ChildApp {
  const app = new ChildApp(name, APP, args);
  cleanup.add({ close: () => (app.kill('SIGKILL'), app.exited) });
  return app;
}

describe('startup with the Location Store', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.closeAll());

  it('unreachable: listen() fails naming the store and ECONNREFUSED; Nest never logs that it started', async () => {
    const port = await freePort();
    const app = start(cleanup, 'unreachable', {
      redisUrl: `redis://:s3cret@127.0.0.1:${port}`,
      startupTimeoutMs: 1500,
    });
    const fatal = await app.next('fatal', 30000);
    expect(fatal.code).toBe('Unavailable');
    expect(fatal.message).toContain(`redis://127.0.0.1:${port}`);
    expect(fatal.message).toContain('ECONNREFUSED');
    expect(JSON.stringify(fatal)).not.toContain('s3cret');
    expect(fatal.causeCode).toBe('ECONNREFUSED');
    expect((await app.exited).code).toBe(1);
    await app.closed;
    expect(started(app)).toEqual([]);
  }, 60000);

  it('up: listen() resolves and Nest logs that it started', async () => {
    const redis = await RedisServer.start();
    cleanup.add({ close: () => redis.stop() });
    const app = start(cleanup, 'up', { redisUrl: redis.url, startupTimeoutMs: 5000 });
    await app.next('ready', 30000);
    expect(started(app)).toEqual(['Nest microservice successfully started']);
    app.send({ type: 'close' });
    await app.next('closed', 15000);
    expect((await app.exited).code).toBe(0);
  }, 60000);
});
