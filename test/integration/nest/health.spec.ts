/**
 * The Terminus health indicator (`nestjs-zlink/terminus`) in a real Nest application: real zeromq
 * sockets, a real redis-server for the Location Store. The checks run through a controller built the
 * way a user writes it (`HealthCheckService.check([() => zlink.isHealthy('zlink')])`), called directly:
 * no HTTP platform is installed.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { Controller, Get, type INestApplicationContext, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, type HealthCheckResult, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { type ZLinkOptions, ZLinkModule, ZLinkRuntime } from '../../../lib/index.js';
import { ZLinkHealthIndicator } from '../../../lib/nest/health/index.js';
import { importsOf, readLibFiles } from '../../unit/architecture-rules.js';
import { RedisServer } from '../../helpers/redis-server.js';
import { bootApp, localOptions } from './nest-app.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly zlink: ZLinkHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.zlink.isHealthy('zlink')]);
  }
}

/** Boots an app with Terminus and the indicator next to `ZLinkModule.forRoot(options)`. */
function bootHealthApp(options: ZLinkOptions): Promise<INestApplicationContext> {
  return bootApp({
    zlink: ZLinkModule.forRoot(options),
    imports: [TerminusModule.forRoot({ logger: false })],
    providers: [ZLinkHealthIndicator],
    controllers: [HealthController],
  });
}

type ZLinkDetails = Record<string, any> & { status: 'up' | 'down' };

/** One check through Terminus: a 503 (`ServiceUnavailableException`) is read, not thrown. */
async function check(app: INestApplicationContext): Promise<HealthCheckResult> {
  try {
    return await app.get(HealthController).check();
  } catch (error) {
    if (error instanceof ServiceUnavailableException) return error.getResponse() as HealthCheckResult;
    throw error;
  }
}

/** Checks until the `zlink` indicator reports `want`, within `timeoutMs`; the last result names what it saw. */
async function until(
  app: INestApplicationContext,
  want: 'up' | 'down',
  timeoutMs = 5000,
): Promise<{ result: HealthCheckResult; zlink: ZLinkDetails }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check(app);
    const zlink = result.details['zlink'] as ZLinkDetails;
    if (zlink.status === want) return { result, zlink };
    if (Date.now() > deadline)
      throw new Error(`zlink not ${want} within ${timeoutMs} ms; last: ${JSON.stringify(zlink)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ZLinkHealthIndicator (@nestjs/terminus)', () => {
  const apps: INestApplicationContext[] = [];
  let redis: RedisServer | undefined;
  afterEach(async () => {
    for (const app of apps.splice(0).reverse()) await app.close();
    await redis?.stop();
    redis = undefined;
  });

  it('up when the server is bound and the client channel has a ready candidate; details list listeners and channels', async () => {
    const app = await bootHealthApp(localOptions('billing'));
    apps.push(app);
    const { result, zlink } = await until(app, 'up');
    expect(result.status).toBe('ok');
    expect(zlink.runtime).toBe('started');
    expect(zlink.reasons).toEqual([]);
    expect(zlink.draining).toBe(false);
    expect(zlink.listeners).toEqual([
      {
        kind: 'client-server',
        name: 'billing',
        state: 'bound',
        endpoint: app.get(ZLinkRuntime).endpoint('billing'),
      },
    ]);
    expect(zlink.channels).toEqual([
      expect.objectContaining({
        channel: 'billing',
        arrangement: 'client-server',
        role: 'client_and_server',
        readyCandidates: 1,
        draining: false,
      }),
    ]);
    expect(zlink.store).toEqual({ configured: false });
  });

  it('down when the only server of a client channel is closed; the details name the channel', async () => {
    const server = await bootHealthApp({
      clientServer: { billing: { server: { listen: { bindHost: '127.0.0.1' } } } },
    });
    apps.push(server);
    const endpoint = server.get(ZLinkRuntime).endpoint('billing') as string;
    const client = await bootHealthApp({ clientServer: { billing: { client: { connect: [endpoint] } } } });
    apps.push(client);
    const up = await until(client, 'up');
    expect(up.zlink.channels).toEqual([expect.objectContaining({ channel: 'billing', readyCandidates: 1 })]);

    // Its runtime closes without a drain: the client sees the connection go.
    await server.get(ZLinkRuntime).close();
    const { result, zlink } = await until(client, 'down');
    // Terminus answered 503: the overall status is `error`, naming the indicator.
    expect(result.status).toBe('error');
    expect(result.error).toHaveProperty('zlink');
    expect(zlink.message).toContain(`client channel 'billing' has no ready candidate`);
    expect(zlink.reasons).toEqual([`client channel 'billing' has no ready candidate`]);
    expect(zlink.channels).toEqual([
      expect.objectContaining({ channel: 'billing', role: 'client', readyCandidates: 0 }),
    ]);
  });

  it('RouteMesh: up with a ready peer serving the client membership (details list the peer and link), down when it leaves', async () => {
    const listen = { bindHost: '127.0.0.1' };
    const server = await bootHealthApp({
      meshes: { game: { rid: 'srv', listen, channels: { match: { role: 'server' } } } },
    });
    apps.push(server);
    const endpoint = server.get(ZLinkRuntime).meshEndpoint('game') as string;
    const client = await bootHealthApp({
      meshes: { game: { rid: 'cli', listen, peers: [endpoint], channels: { match: { role: 'client' } } } },
    });
    apps.push(client);
    const up = await until(client, 'up');
    expect(up.zlink.peers).toEqual([
      { mesh: 'game', rid: 'cli', peers: ['srv'], links: [{ endpoint, status: 'ready', peerRid: 'srv' }] },
    ]);
    expect(up.zlink.channels).toEqual([
      { channel: 'match', arrangement: 'route-mesh', mesh: 'game', role: 'client', readyCandidates: 1 },
    ]);
    expect(up.zlink.listeners).toEqual([expect.objectContaining({ kind: 'route-mesh', name: 'game' })]);
    const serverSide = await until(server, 'up');
    expect(serverSide.zlink.channels).toEqual([
      expect.objectContaining({ channel: 'match', role: 'server', weight: 100, draining: false }),
    ]);

    await server.close();
    apps.splice(apps.indexOf(server), 1);
    const { zlink } = await until(client, 'down');
    expect(zlink.reasons).toEqual([`mesh 'game' client channel 'match' has no ready candidate`]);
    // Nest's shutdown drained it first: out of selection at once, though the peer may still be listed.
    expect(zlink.channels).toEqual([expect.objectContaining({ channel: 'match', readyCandidates: 0 })]);
  });

  it('down while its server drains (the drain closes the listener)', async () => {
    const app = await bootHealthApp(localOptions('billing'));
    apps.push(app);
    await until(app, 'up');
    await app.get(ZLinkRuntime).drain();
    const { zlink } = await until(app, 'down');
    expect(zlink.draining).toBe(true);
    expect(zlink.listeners).toEqual([expect.objectContaining({ name: 'billing', state: 'draining' })]);
    expect(zlink.message).toContain(`the ClientServer server of 'billing' is draining`);
    // The only candidate of its own client channel was that server.
    expect(zlink.message).toContain(`client channel 'billing' has no ready candidate`);
  });

  it('with a Location Store: up, down while the redis-server is killed (the store does not answer), up again after it restarts', async () => {
    redis = await RedisServer.start();
    const app = await bootHealthApp({
      ...localOptions('billing'),
      locationStore: { redis: redis.url, keyPrefix: `health-${process.pid}` },
    });
    apps.push(app);

    const before = await until(app, 'up');
    expect(before.zlink.store).toEqual(
      expect.objectContaining({ configured: true, answers: true, fenced: false, discoveryOutage: [] }),
    );

    await redis.stop();
    const { result, zlink } = await until(app, 'down');
    expect(result.status).toBe('error');
    expect(zlink.store).toEqual(expect.objectContaining({ configured: true, answers: false }));
    expect(zlink.message).toMatch(/the Location Store does not answer \(.+\)/);
    // Only the store: the channel still has its ready server.
    expect(zlink.reasons).toHaveLength(1);
    expect(zlink.channels).toEqual([expect.objectContaining({ channel: 'billing', readyCandidates: 1 })]);

    await redis.restart();
    // ioredis reconnects on its own backoff (at most 2 s between attempts).
    const after = await until(app, 'up', 10000);
    expect(after.zlink.store).toEqual(expect.objectContaining({ configured: true, answers: true }));
  });

  it('the indicator bounds the store round trip by its own timeout (storeTimeoutMs)', async () => {
    redis = await RedisServer.start();
    const app = await bootHealthApp({
      ...localOptions('billing'),
      locationStore: { redis: redis.url, keyPrefix: `health-${process.pid}-pause` },
    });
    apps.push(app);
    const indicator = app.get(ZLinkHealthIndicator);
    await until(app, 'up');
    // The connection stays up, but Redis answers nothing for 1.5 s: the check ends at 200 ms.
    await redis.pauseClients(1500);
    const t0 = Date.now();
    const result = await indicator.isHealthy('zlink', { storeTimeoutMs: 200 });
    const ms = Date.now() - t0;
    expect(result.zlink.status).toBe('down');
    expect(result.zlink.message).toMatch(/the Location Store does not answer \(.*200 ms.*\)/);
    expect(ms).toBeLessThan(1400);
  });

  it("the main barrel never loads @nestjs/terminus: it is reached only through 'nestjs-zlink/terminus'", () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const files = new Map(readLibFiles(root).map((f) => [f.path, f.text]));
    const seen = new Set<string>();
    const walk = (path: string): void => {
      if (seen.has(path)) return;
      seen.add(path);
      for (const spec of importsOf(files.get(path) ?? '')) {
        expect(`${path} -> ${spec}`).not.toMatch(/@nestjs\/terminus$/);
        if (spec.startsWith('.')) {
          const dir = path.split('/').slice(0, -1);
          for (const part of spec.replace(/\.js$/, '.ts').split('/')) {
            if (part === '..') dir.pop();
            else if (part !== '.') dir.push(part);
          }
          walk(dir.join('/'));
        }
      }
    };
    walk('lib/index.ts');
    expect(seen.has('lib/runtime/health.ts')).toBe(true);
    expect(seen.has('lib/nest/health/zlink-health.indicator.ts')).toBe(false);
  });
});
