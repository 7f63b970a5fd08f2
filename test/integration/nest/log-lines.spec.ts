/**
 * What an operator reads: the runtime's lines through Nest's Logger (context `ZLink`) of real apps over
 * real sockets. A graceful leave (a server or peer that drained, as `app.close()` does) is `log`, a loss
 * without it `warn`; a line names the session listener it is about; two Object Clients do not peer, and
 * the node whose `peers` named the other is told why and what to do (docs/objects.md#object-clients-do-not-peer),
 * while discovery never pairs them at all.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  MemoryLocationStore,
  type ZLinkOptions,
  ZLinkModule,
  ZLinkRuntime,
  isZLinkError,
} from '../../../lib/index.js';
import { ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { waitFor } from '../../helpers/index.js';
import { CapturingLogger } from './nest-app.js';

const listen = { bindHost: '127.0.0.1' };
const apps: INestApplicationContext[] = [];
const runtimes: ZLinkRuntime[] = [];
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.close();
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

/**
 * Boots an app whose lines go to `logger`. Nest's Logger is one per process (the last app booted sets
 * it), so every app of a test is given the same one and the lines tell the nodes apart.
 */
async function boot(options: ZLinkOptions, logger: CapturingLogger) {
  @Module({ imports: [ZLinkModule.forRoot(options)] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
  apps.push(app);
  return app;
}

/** Closes `app` as a graceful stop does (Nest's shutdown: drain, then close). */
async function stop(app: INestApplicationContext): Promise<void> {
  apps.splice(apps.indexOf(app), 1);
  await app.close();
}

/** Waits for a `ZLink` line that matches `pattern`, and returns it. */
async function line(logger: CapturingLogger, pattern: RegExp): Promise<{ level: string; message: string }> {
  await waitFor(
    () => logger.zlink().some((l) => pattern.test(l.message)),
    10000,
    () => `a line like ${String(pattern)} in ${JSON.stringify(logger.zlink())}`,
  );
  return logger.zlink().find((l) => pattern.test(l.message)) as { level: string; message: string };
}

describe('a graceful leave is logged at log level; a loss at warn', () => {
  it("a mesh peer that drained and closed (app.close) is 'log'; one closed without draining is 'warn'", async () => {
    const logger = new CapturingLogger();
    const observer = await boot(
      { meshes: { game: { rid: 'observer', listen, channels: { match: { role: 'server' } } } } },
      logger,
    );
    const endpoint = observer.get(ZLinkRuntime).meshEndpoint('game') as string;
    const leaving = await boot(
      {
        meshes: {
          game: { rid: 'leaver', listen, peers: [endpoint], channels: { match: { role: 'client' } } },
        },
      },
      logger,
    );
    const crashing = new ZLinkRuntime({ meshes: { game: { rid: 'crasher', listen, peers: [endpoint] } } });
    runtimes.push(crashing);
    await crashing.start();
    await observer.get(ZLinkRuntime).waitForPeers('game', 2);

    await stop(leaving);
    expect(await line(logger, /^peer leaver of mesh 'game' (left|lost)/)).toMatchObject({
      level: 'log',
      message: expect.stringMatching(/^peer leaver of mesh 'game' left after draining/),
    });

    await crashing.close();
    expect(await line(logger, /^peer crasher of mesh 'game' (left|lost)/)).toMatchObject({
      level: 'warn',
      message: expect.stringMatching(/^peer crasher of mesh 'game' lost/),
    });
  });

  it("a ClientServer server that drained and closed (app.close) is 'log' on its client", async () => {
    const logger = new CapturingLogger();
    const server = await boot({ clientServer: { billing: { server: { listen } } } }, logger);
    const endpoint = server.get(ZLinkRuntime).endpoint('billing') as string;
    const client = await boot({ clientServer: { billing: { client: { connect: [endpoint] } } } }, logger);
    await client.get(ZLinkRuntime).waitForCandidates('billing', 1);

    await stop(server);
    expect(await line(logger, /^server .* of 'billing' at .* (left|lost)/)).toMatchObject({
      level: 'log',
      message: expect.stringMatching(/left after draining$/),
    });
  });
});

describe('lines name what they are about', () => {
  it("a session listener's lines name the listener: listening, and a packet nobody handles", async () => {
    const logger = new CapturingLogger();
    const app = await boot(
      {
        meshes: { game: { objectRole: 'server', listen } },
        locationStore: { instance: new MemoryLocationStore() },
        sessions: { players: { mesh: 'game', listen } },
      },
      logger,
    );
    expect(logger.zlink()).toContainEqual({
      level: 'log',
      message: expect.stringMatching(/^session listener 'players' listening on tcp:\/\/127\.0\.0\.1:\d+$/),
    });

    const local = app.get(ZLinkRuntime).sessions.localEndpoint('players') as string;
    const session = new ZLinkSessionClient({ host: '127.0.0.1', port: Number(local.split(':').pop()) });
    await session.connect();
    try {
      await session.request('nobody.handles', 1).catch(() => undefined);
      expect(await line(logger, /^no_handler/)).toMatchObject({
        level: 'warn',
        message: expect.stringMatching(/^no_handler on session listener 'players' \(nobody\.handles\)/),
      });
    } finally {
      await session.close();
    }
  });
});

describe('object clients do not peer with each other', () => {
  const client = (rid: string, store: MemoryLocationStore, extra: object = {}): ZLinkOptions => ({
    locationStore: { instance: store },
    meshes: { objects: { rid, listen, objectRole: 'client', ...extra } },
  });

  it('the node whose peers named another Object Client is warned with the rule; the other hears it at log; a Node direct call says it', async () => {
    const store = new MemoryLocationStore();
    const logger = new CapturingLogger();
    const gate1 = await boot(client('gate-1', store), logger);
    const endpoint = gate1.get(ZLinkRuntime).meshEndpoint('objects') as string;
    const gate2 = await boot(client('gate-2', store, { peers: [endpoint] }), logger);

    const warned = await line(logger, /^peer at .* refused/);
    expect(warned.level).toBe('warn');
    expect(warned.message).toContain(`peer at ${endpoint} of mesh 'objects' refused`);
    expect(warned.message).toContain('object clients do not peer with each other');
    expect(warned.message).toContain("objectRole 'server'");
    const heard = await line(logger, /^hello from .* refused/);
    expect(heard).toMatchObject({
      level: 'log',
      message: expect.stringMatching(
        /^hello from node 'gate-2' of mesh 'objects' refused: object clients do not peer/,
      ),
    });

    const call = gate2.get(ZLinkRuntime).routeClient.requestToNode('objects', 'gate-1', 'ping', 0).async();
    const failed = await call.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isZLinkError(failed, 'NotFound')).toBe(true);
    expect((failed as Error).message).toContain('object clients do not peer with each other');
  });

  it('discovery does not even connect two Object Clients: no link, no refused line', async () => {
    const store = new MemoryLocationStore();
    const auto = { discovery: 'auto' as const };
    const logger = new CapturingLogger();
    await boot(client('gate-b', store, auto), logger);
    // The byte-wise smaller NodeRid connects at its first read, which its start awaits.
    const gateA = await boot(client('gate-a', store, auto), logger);
    const mesh = gateA.get(ZLinkRuntime).snapshot().meshes[0];
    expect(mesh?.links).toEqual([]);
    expect(logger.zlink().filter((l) => /refused/.test(l.message))).toEqual([]);
  });
});
