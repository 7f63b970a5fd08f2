/**
 * Separate processes that find each other through a real redis-server only: no endpoint is written
 * anywhere in their configuration (docs/protocol.md#discovery, docs/protocol.md#clientserver-handshake). Two servers (ClientServer `billing`
 * weights 100/300, RouteMesh `match`, Node direct), one client; then a server is SIGKILLed and
 * started again, and the client reaches its new generation.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { RedisServer } from '../helpers/redis-server.js';

const APP = 'e2e/auto-discovery.app.js';

describe("three processes with discovery: 'auto' only", () => {
  let redis: RedisServer;
  const apps: ChildApp[] = [];
  let client: ChildApp;
  /** Starts an app and resolves with it and the generation it reported ready with. */
  const start = async (name: string, args: Record<string, unknown>): Promise<[ChildApp, string]> => {
    const app = new ChildApp(name, APP, { redisUrl: redis.url, keyPrefix: 'e2e-auto', ...args });
    apps.push(app);
    const ready = await app.next('ready');
    return [app, ready.generation as string];
  };

  beforeAll(async () => {
    redis = await RedisServer.start();
    await start('server-a', { role: 'server', rid: 'srv-a', weight: 100 });
    await start('server-b', { role: 'server', rid: 'srv-b', weight: 300 });
    [client] = await start('client', { role: 'client', rid: 'caller' });
    await client.call({ type: 'waitReady', billing: 2, match: 2 }, 20000);
  });

  afterAll(async () => {
    for (const app of apps) app.kill();
    await Promise.all(apps.map((app) => app.exited));
    await redis?.stop();
  });

  const servers = (counts: Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const [key, n] of Object.entries(counts)) {
      const rid = key.split('/')[0] as string;
      out[rid] = (out[rid] ?? 0) + n;
    }
    return out;
  };

  it('ClientServer: 400 requests split 100/300 by weight across the discovered servers', async () => {
    const { counts } = (await client.call({ type: 'billing', n: 400 })) as ChildMessage & {
      counts: Record<string, number>;
    };
    expect(servers(counts)).toEqual({ 'srv-a': 100, 'srv-b': 300 });
  });

  it('RouteMesh: select-one alternates over the two discovered Server nodes, Node direct reaches the named one', async () => {
    const { counts } = (await client.call({ type: 'match', n: 200 })) as ChildMessage & {
      counts: Record<string, number>;
    };
    expect(counts).toEqual({ 'srv-a': 100, 'srv-b': 100 });
    expect(await client.call({ type: 'whoami', rid: 'srv-b' })).toMatchObject({ rid: 'srv-b' });
  });

  it('a SIGKILLed server started again is found at its new endpoint; only its new generation answers', async () => {
    const old = apps.find((a) => a.name === 'server-b') as ChildApp;
    old.kill('SIGKILL');
    await old.exited;
    const [, generation] = await start('server-b2', { role: 'server', rid: 'srv-b', weight: 300 });
    await client.call({ type: 'waitReady', billing: 2, match: 2 }, 20000);
    const { counts } = (await client.call({ type: 'billing', n: 400 })) as ChildMessage & {
      counts: Record<string, number>;
    };
    expect(counts[`srv-b/${generation}`]).toBe(300);
    expect(servers(counts)).toEqual({ 'srv-a': 100, 'srv-b': 300 });
    expect(await client.call({ type: 'whoami', rid: 'srv-b' })).toMatchObject({
      rid: 'srv-b',
      generation: generation,
    });
  });
});
