/**
 * ZLinkServer and ZLinkClientProxy sharing ZLinkModule's runtime: one runtime serves both
 * `@ChannelHandler` and `@MessagePattern` methods, whether the microservice starts before or after
 * the application (hybrid apps) or after the module started it (standalone). Also the runtime rule
 * that makes this possible: a channel handler may join a started runtime on a channel it serves.
 * Real zeromq on 127.0.0.1, port 0.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Inject, Injectable } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientsModule, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import {
  ChannelHandler,
  ZLinkError,
  ZLinkModule,
  ZLinkPayload,
  ZLinkRouteClient,
  ZLinkRuntime,
} from '../../../lib/index.js';
import { ZLinkClientProxy, ZLinkServer } from '../../../lib/nest/microservices/index.js';
import { Cleanup } from '../../helpers/index.js';
import { createHybridApp, moduleOf } from './microservice-harness.js';
import { deferred, localOptions, rejectionOf } from './nest-app.js';

let shipped = deferred<unknown>(0);

@Injectable()
class ChannelHandlers {
  @ChannelHandler('orders', 'orders.status')
  status(@ZLinkPayload() req: { id: string }) {
    return { id: req.id, via: 'ChannelHandler' };
  }
}

@Controller()
class PatternHandlers {
  @MessagePattern({ channel: 'orders', packet: 'orders.place' })
  place(@Payload() req: { id: string }) {
    return { id: req.id, via: 'MessagePattern' };
  }

  @EventPattern({ channel: 'orders', packet: 'orders.shipped' })
  shipped(@Payload() event: unknown): void {
    shipped.resolve(event);
  }
}

@Controller()
class UnservedPattern {
  @MessagePattern({ channel: 'billing', packet: 'billing.charge' })
  charge(): number {
    return 1;
  }
}

@Controller()
class DuplicatePattern {
  @MessagePattern({ channel: 'orders', packet: 'orders.status' })
  status(): number {
    return 2;
  }
}

const zlink = () => ZLinkModule.forRoot(localOptions('orders'));

/** Both kinds of handler answer through the module's route client, so through its one runtime. */
async function expectBothServed(route: ZLinkRouteClient, runtime: ZLinkRuntime): Promise<void> {
  await expect(route.requestToChannel('orders', 'orders.status', { id: 's' }).async()).resolves.toEqual({
    id: 's',
    via: 'ChannelHandler',
  });
  await expect(route.requestToChannel('orders', 'orders.place', { id: 'p' }).async()).resolves.toEqual({
    id: 'p',
    via: 'MessagePattern',
  });
  shipped = deferred<unknown>(5000);
  await route.sendToChannel('orders', 'orders.shipped', { id: 'e' }).async();
  await expect(shipped.promise).resolves.toEqual({ id: 'e' });
  // One runtime: the pattern handlers sit in the module runtime's registry, beside the @ChannelHandler.
  expect(runtime.handlers.lookup('orders', 'request', 'orders.place')?.source).toBe(
    '@MessagePattern({"channel":"orders","packet":"orders.place"})',
  );
  expect(runtime.handlers.lookup('orders', 'request', 'orders.status')?.source).toBe(
    'ChannelHandlers.status',
  );
  expect(runtime.snapshot().channels.filter((c) => c.channel === 'orders')).toHaveLength(1);
}

describe('ZLinkServer sharing ZLinkModule’s runtime', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.closeAll());

  it('standalone: createMicroservice(AppModule, ZLinkServer.fromModule()) — the microservice listens after the module started the runtime', async () => {
    const app = cleanup.add(
      await NestFactory.createMicroservice(
        moduleOf({ imports: [zlink()], providers: [ChannelHandlers], controllers: [PatternHandlers] }),
        { ...ZLinkServer.fromModule(), logger: false, abortOnError: false },
      ),
    );
    await app.listen();
    await expectBothServed(app.get(ZLinkRouteClient), app.get(ZLinkRuntime));
  });

  it('hybrid: startAllMicroservices() before app.init() — registered before the runtime starts', async () => {
    const app = cleanup.add(
      await createHybridApp({
        imports: [zlink()],
        providers: [ChannelHandlers],
        controllers: [PatternHandlers],
      }),
    );
    app.connectMicroservice(ZLinkServer.fromModule());
    await app.startAllMicroservices(); // does not wait for the runtime: the module starts it in init
    await app.init();
    await expectBothServed(app.get(ZLinkRouteClient), app.get(ZLinkRuntime));
  });

  it('hybrid: app.init() before startAllMicroservices() — handlers join the started runtime', async () => {
    const app = cleanup.add(
      await createHybridApp({
        imports: [zlink()],
        providers: [ChannelHandlers],
        controllers: [PatternHandlers],
      }),
    );
    const runtime = app.get(ZLinkRuntime);
    app.connectMicroservice({ strategy: new ZLinkServer({ runtime }) });
    await app.init();
    // Started and serving, but the microservice has not listened yet: its pattern has no handler.
    const route = app.get(ZLinkRouteClient);
    const early = await rejectionOf(() =>
      route.requestToChannel('orders', 'orders.place', { id: '0' }).async(),
    );
    expect(early).toMatchObject({ code: 'RemoteError', remoteCode: 'NoHandler' });
    await app.startAllMicroservices();
    await expectBothServed(app.get(ZLinkRouteClient), runtime);
  });

  it('a pattern on a channel the process does not serve: Configuration from app.init() (microservice first) or from startAllMicroservices() (app first)', async () => {
    const first = cleanup.add(await createHybridApp({ imports: [zlink()], controllers: [UnservedPattern] }));
    first.connectMicroservice(ZLinkServer.fromModule());
    await first.startAllMicroservices();
    const atInit = await rejectionOf(() => first.init());
    expect(atInit).toBeInstanceOf(ZLinkError);
    expect(atInit).toMatchObject({ code: 'Configuration' });
    expect(atInit.message).toContain('@MessagePattern({"channel":"billing","packet":"billing.charge"})');

    const second = cleanup.add(await createHybridApp({ imports: [zlink()], controllers: [UnservedPattern] }));
    second.connectMicroservice(ZLinkServer.fromModule());
    await second.init();
    const atListen = await rejectionOf(() => second.startAllMicroservices());
    expect(atListen).toMatchObject({ code: 'Configuration' });
    expect(atListen.message).toContain("channel 'billing' is not registered in this process");
  });

  it('a @MessagePattern and a @ChannelHandler on the same (channel, kind, packet): Configuration naming both', async () => {
    const app = cleanup.add(
      await createHybridApp({
        imports: [zlink()],
        providers: [ChannelHandlers],
        controllers: [DuplicatePattern],
      }),
    );
    app.connectMicroservice(ZLinkServer.fromModule());
    await app.init();
    const error = await rejectionOf(() => app.startAllMicroservices());
    expect(error).toMatchObject({ code: 'Configuration' });
    expect(error.message).toContain('ChannelHandlers.status');
    expect(error.message).toContain('@MessagePattern({"channel":"orders","packet":"orders.status"})');
  });

  it('ClientsModule.registerAsync({ inject: [ZLinkRuntime] }): the proxy calls through the module’s runtime; app.close() closes everything once', async () => {
    @Injectable()
    class Caller {
      constructor(@Inject('ORDERS') readonly client: ZLinkClientProxy) {}
    }
    const app = cleanup.add(
      await createHybridApp({
        imports: [
          zlink(),
          ClientsModule.registerAsync([
            {
              name: 'ORDERS',
              inject: [ZLinkRuntime],
              useFactory: (runtime: ZLinkRuntime) => ({
                customClass: ZLinkClientProxy,
                options: { runtime },
              }),
            },
          ]),
        ],
        providers: [ChannelHandlers, Caller],
        controllers: [PatternHandlers],
      }),
    );
    app.connectMicroservice(ZLinkServer.fromModule());
    await app.startAllMicroservices();
    await app.init();
    const runtime = app.get(ZLinkRuntime);
    const { client } = app.get(Caller);
    expect(client.unwrap()).toBe(runtime);
    await client.connect(); // a shared runtime: nothing to start, resolves at once
    await expect(
      firstValueFrom(client.send({ channel: 'orders', packet: 'orders.place' }, { id: 'c' })),
    ).resolves.toEqual({ id: 'c', via: 'MessagePattern' });
    await expect(
      firstValueFrom(client.send({ channel: 'orders', packet: 'orders.status' }, { id: 'd' })),
    ).resolves.toEqual({ id: 'd', via: 'ChannelHandler' });
    await app.close();
    const after = await rejectionOf(() =>
      firstValueFrom(client.send({ channel: 'orders', packet: 'orders.place' }, { id: 'x' })),
    );
    expect(after).toMatchObject({ code: 'Shutdown' });
  });
});

describe('runtime: a channel handler may join a started runtime on a channel it serves', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.closeAll());

  it('served channel: registered after start and called; unserved channel, node and fanout handlers, closed runtime: Configuration', async () => {
    const runtime = cleanup.add(
      new ZLinkRuntime({
        ...localOptions('orders'),
        clientServer: {
          ...localOptions('orders').clientServer,
          audit: { client: { connect: ['tcp://127.0.0.1:1'] } },
        },
      }),
    );
    await runtime.start();
    runtime.registerChannelHandler({
      channel: 'orders',
      kind: 'request',
      packet: 'late',
      handler: (payload) => ({ late: payload }),
      source: 'test.late',
    });
    await expect(runtime.routeClient.requestToChannel('orders', 'late', 1).async()).resolves.toEqual({
      late: 1,
    });

    const late = (channel: string) => () =>
      runtime.registerChannelHandler({
        channel,
        kind: 'send',
        packet: 'p',
        handler: () => 1,
        source: 'test.p',
      });
    expect(late('audit')).toThrow(/handler test\.p: channel 'audit' has no Server role in this process/);
    expect(late('nowhere')).toThrow(/channel 'nowhere' is not registered in this process/);
    expect(() =>
      runtime.registerNodeHandler({
        mesh: 'm',
        kind: 'send',
        packet: 'p',
        handler: () => 1,
        source: 'test.n',
      }),
    ).toThrow(/before the runtime starts/);
    // A duplicate is refused after start as before it.
    expect(() =>
      runtime.registerChannelHandler({
        channel: 'orders',
        kind: 'request',
        packet: 'late',
        handler: () => 2,
        source: 'test.again',
      }),
    ).toThrow(/declared twice: test\.late and test\.again/);
    await runtime.close();
    expect(late('orders')).toThrow(ZLinkError);
  });
});
