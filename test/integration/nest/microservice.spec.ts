/**
 * ZLinkServer (a Nest CustomTransportStrategy) and ZLinkClientProxy (a Nest ClientProxy) in one
 * process, over real zeromq on 127.0.0.1 with port 0: a standalone Nest microservice serving
 * `@MessagePattern` / `@EventPattern` and a Nest application calling it through `ClientsModule`.
 */
import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  type INestMicroservice,
  UseGuards,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientsModule,
  Ctx,
  EventPattern,
  MessagePattern,
  Payload,
  RpcException,
} from '@nestjs/microservices';
import { InvalidMessageException } from '@nestjs/microservices/errors/invalid-message.exception.js';
import { EmptyError, firstValueFrom, lastValueFrom } from 'rxjs';
import { ZLinkError, ZLinkRuntime } from '../../../lib/index.js';
import {
  ZLINK_TRANSPORT,
  ZLinkClientProxy,
  ZLinkRpcContext,
  ZLinkServer,
} from '../../../lib/nest/microservices/index.js';
import { Cleanup, Gate, waitFor, within } from '../../helpers/index.js';
import { bootClientApp, clientOptions, moduleOf } from './microservice-harness.js';
import { deferred, rejectionOf } from './nest-app.js';

const ORDERS = 'orders';
const serverOptions = {
  clientServer: { [ORDERS]: { server: { listen: { bindHost: '127.0.0.1' } } } },
  requestTimeoutMs: 5000,
};

/** What the handlers saw, reset per test. */
const seen = {
  events: [] as { payload: unknown; ctx: ZLinkRpcContext }[],
  eventArrived: deferred<void>(0),
  slowStarted: deferred<void>(0),
  slowGate: new Gate(),
  slowFinished: 0,
  placed: 0,
};

class DenyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToRpc().getContext<ZLinkRpcContext>().metadata.role === 'admin';
  }
}

@Controller()
class OrdersController {
  @MessagePattern({ channel: ORDERS, packet: 'orders.place' })
  place(@Payload() order: { id: string; qty: number }, @Ctx() ctx: ZLinkRpcContext) {
    seen.placed++;
    return {
      accepted: order.id,
      total: order.qty * 10,
      isRpcContext: ctx instanceof ZLinkRpcContext,
      pattern: ctx.getPattern(),
      channelName: ctx.channelName,
      kind: ctx.kind,
      correlationIsNumber: typeof ctx.correlation === 'number',
      metadata: { ...ctx.getMetadata() },
    };
  }

  @MessagePattern({ channel: ORDERS, packet: 'orders.context' })
  context(@Ctx() ctx: ZLinkRpcContext) {
    const nest = ctx.getMetadata();
    return {
      getMetadataIsUndefined: nest === undefined,
      getMetadata: nest === undefined ? null : { ...nest },
      sameSnapshot: nest === undefined || nest === ctx.metadata,
      metadata: { ...ctx.metadata },
      metadataFrozen: Object.isFrozen(ctx.metadata),
      messageContextMetadataFrozen: Object.isFrozen(ctx.getMessageContext().metadata),
    };
  }

  @MessagePattern({ channel: ORDERS, packet: 'orders.nothing' })
  nothing(): void {
    seen.placed++;
  }

  @MessagePattern({ channel: ORDERS, packet: 'orders.reject' })
  reject(@Payload() req: { as: 'object' | 'string' }): never {
    if (req.as === 'string') throw new RpcException('out of stock');
    throw new RpcException({ code: 'E_STOCK', message: 'out of stock', sku: 'A-1' });
  }

  @MessagePattern({ channel: ORDERS, packet: 'orders.admin' })
  @UseGuards(DenyGuard)
  admin(): string {
    return 'allowed';
  }

  @MessagePattern({ channel: ORDERS, packet: 'orders.slow' }, ZLINK_TRANSPORT)
  async slow(): Promise<string> {
    seen.slowStarted.resolve();
    await seen.slowGate.promise;
    seen.slowFinished++;
    return 'slow done';
  }

  @EventPattern({ channel: ORDERS, packet: 'orders.lost' })
  lost(): never {
    throw new RpcException('no such parcel');
  }

  @EventPattern({ channel: ORDERS, packet: 'orders.shipped' })
  shipped(@Payload() payload: unknown, @Ctx() ctx: ZLinkRpcContext): void {
    seen.events.push({ payload, ctx });
    seen.eventArrived.resolve();
  }
}

/**
 * A Nest user's subclass of the proxy using Nest's documented hook points: every `send()` reply goes
 * through `serializeResponse()`, every `send()` failure through `serializeError()`.
 */
class ShapingProxy extends ZLinkClientProxy {
  readonly responses: unknown[] = [];
  readonly errors: unknown[] = [];
  failShaping = false;

  protected override serializeResponse(response: unknown): unknown {
    this.responses.push(response);
    if (this.failShaping) throw new Error('cannot shape this reply');
    return { shaped: response };
  }

  protected override serializeError(err: unknown): unknown {
    this.errors.push(err);
    const { code, details } = err as ZLinkError;
    return new RpcException({ code, details });
  }
}

function resetSeen(): void {
  seen.events = [];
  seen.eventArrived = deferred<void>(5000);
  seen.slowStarted = deferred<void>(5000);
  seen.slowGate.open();
  seen.slowGate = new Gate();
  seen.slowFinished = 0;
}

async function startOrders(): Promise<{ app: INestMicroservice; server: ZLinkServer }> {
  const server = new ZLinkServer(serverOptions);
  const app = await NestFactory.createMicroservice(moduleOf({ controllers: [OrdersController] }), {
    strategy: server,
    logger: false,
    abortOnError: false,
  });
  await app.listen();
  return { app, server };
}

describe('ZLinkServer + ZLinkClientProxy (one process, real sockets)', () => {
  const suite = new Cleanup();
  let server: ZLinkServer;
  let client: ZLinkClientProxy;
  let endpoint: string;

  beforeAll(async () => {
    const orders = await startOrders();
    suite.add(orders.app);
    server = orders.server;
    endpoint = server.unwrap<ZLinkRuntime>().endpoint(ORDERS) as string;
    const booted = await bootClientApp('ORDERS', clientOptions(ORDERS, endpoint));
    suite.add(booted.app);
    client = booted.client;
    await client.connect();
    await client.unwrap<ZLinkRuntime>().waitForCandidates(ORDERS, 1, 10000);
  });

  afterEach(resetSeen);

  afterAll(async () => {
    seen.slowGate.open();
    await suite.closeAll();
  });

  it('@MessagePattern request/reply through ClientsModule; @Ctx() is a ZLinkRpcContext; dispatch-hook metadata travels', async () => {
    const reply = await firstValueFrom(
      client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'o-1', qty: 3 }),
    );
    expect(reply).toEqual({
      accepted: 'o-1',
      total: 30,
      isRpcContext: true,
      pattern: { channel: ORDERS, packet: 'orders.place' },
      channelName: ORDERS,
      kind: 'request',
      correlationIsNumber: true,
      metadata: {},
    });

    client.setOnDispatchHook((packet) => {
      packet.metadata = { 'tenant-id': 't-9', locale: 'ko-KR' };
    });
    try {
      const tagged = await firstValueFrom(
        client.send<{ metadata: Record<string, string> }>(
          { channel: ORDERS, packet: 'orders.place' },
          { id: 'o-2', qty: 1 },
        ),
      );
      expect(tagged.metadata).toEqual({ 'tenant-id': 't-9', locale: 'ko-KR' });
    } finally {
      client.setOnDispatchHook(() => undefined);
    }
  });

  it('send() is cold: nothing is sent until subscribed, and each subscription is one request', async () => {
    const before = seen.placed;
    const reply$ = client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'cold', qty: 1 });
    // A request sent now would have reached the handler well within this time.
    await firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'probe', qty: 1 }));
    expect(seen.placed).toBe(before + 1);
    await firstValueFrom(reply$);
    await firstValueFrom(reply$);
    expect(seen.placed).toBe(before + 3);
  });

  it('@EventPattern receives emit() as a one-way send (kind send, no correlation)', async () => {
    await lastValueFrom(client.emit({ channel: ORDERS, packet: 'orders.shipped' }, { id: 'o-3' }), {
      defaultValue: undefined,
    });
    await seen.eventArrived.promise;
    expect(seen.events).toHaveLength(1);
    const [event] = seen.events;
    expect(event?.payload).toEqual({ id: 'o-3' });
    expect(event?.ctx.kind).toBe('send');
    expect(event?.ctx.correlation).toBeUndefined();
    expect(event?.ctx.getPattern()).toEqual({ channel: ORDERS, packet: 'orders.shipped' });
  });

  it('an @EventPattern handler that throws: nothing goes back to the sender, the server counts a handler_error', async () => {
    const runtime = server.unwrap<ZLinkRuntime>();
    const before = runtime.events.count('delivery:handler_error');
    await lastValueFrom(client.emit({ channel: ORDERS, packet: 'orders.lost' }, {}), {
      defaultValue: undefined,
    });
    await waitFor(
      () => runtime.events.count('delivery:handler_error') === before + 1,
      5000,
      'a handler_error',
    );
  });

  it('RpcException reaches the subscriber as ZLinkError RemoteError carrying its payload', async () => {
    const objectError = await rejectionOf(() =>
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.reject' }, { as: 'object' })),
    );
    expect(objectError).toBeInstanceOf(ZLinkError);
    expect(objectError).toMatchObject({ code: 'RemoteError', remoteCode: 'HandlerError' });
    expect(objectError.details).toEqual({ code: 'E_STOCK', message: 'out of stock', sku: 'A-1' });
    expect(objectError.message).toContain('out of stock');

    // A string payload comes back the way Nest's exception filter shapes it.
    const stringError = await rejectionOf(() =>
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.reject' }, { as: 'string' })),
    );
    expect(stringError).toMatchObject({ code: 'RemoteError' });
    expect(stringError.details).toEqual({ status: 'error', message: 'out of stock' });
  });

  it("a guard runs in Nest's pipeline: refused → RemoteError 'Forbidden resource'; allowed with the right metadata", async () => {
    const refused = await rejectionOf(() =>
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.admin' }, {})),
    );
    expect(refused).toMatchObject({ code: 'RemoteError' });
    expect(refused.details).toEqual({ status: 'error', message: 'Forbidden resource' });

    client.setOnDispatchHook((packet) => {
      packet.metadata = { role: 'admin' };
    });
    try {
      await expect(
        firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.admin' }, {})),
      ).resolves.toBe('allowed');
    } finally {
      client.setOnDispatchHook(() => undefined);
    }
  });

  it('unsubscribing before the reply cancels the request: the subscriber gets nothing, nothing stays pending, the next call works', async () => {
    const clientRuntime = client.unwrap<ZLinkRuntime>();
    const got: string[] = [];
    const subscription = client.send({ channel: ORDERS, packet: 'orders.slow' }, {}).subscribe({
      next: () => got.push('next'),
      error: () => got.push('error'),
      complete: () => got.push('complete'),
    });
    await seen.slowStarted.promise; // the handler is running on the server
    expect(clientRuntime.snapshot().pendingRequests).toBe(1);
    subscription.unsubscribe();
    expect(clientRuntime.snapshot().pendingRequests).toBe(0);

    // The handler finishes; its late reply is dropped on the client side.
    seen.slowGate.open();
    await waitFor(() => seen.slowFinished === 1, 5000, 'the slow handler to finish');
    await waitFor(() => clientRuntime.snapshot().lateReplies >= 1, 5000, 'the late reply to arrive');
    expect(got).toEqual([]);

    const reply = await firstValueFrom(
      client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'after', qty: 2 }),
    );
    expect(reply).toMatchObject({ accepted: 'after', total: 20 });
    expect(clientRuntime.snapshot().pendingRequests).toBe(0);
  });

  it('requestTimeoutMs bounds each send(): no reply in time → ZLinkError Timeout', async () => {
    // A second proxy sharing the first one's runtime, with its own deadline.
    const quick = new ZLinkClientProxy({ runtime: client.unwrap<ZLinkRuntime>(), requestTimeoutMs: 300 });
    const started = Date.now();
    const error = await rejectionOf(() =>
      firstValueFrom(quick.send({ channel: ORDERS, packet: 'orders.slow' }, {})),
    );
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.code).toBe('Timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await quick.close();
    // Closing a proxy that shares a runtime leaves the runtime serving.
    await expect(
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'x', qty: 1 })),
    ).resolves.toMatchObject({ accepted: 'x' });
  });

  it.each([
    ['a string pattern', 'orders.place'],
    ['a missing packet', { channel: ORDERS }],
    ['an empty channel', { channel: '', packet: 'orders.place' }],
    ['an extra key', { channel: ORDERS, packet: 'orders.place', cmd: 'x' }],
  ])('send()/emit() with %s → ZLinkError InvalidArgument, nothing sent', async (_name, pattern) => {
    const sent = await rejectionOf(() => firstValueFrom(client.send(pattern, {})));
    expect(sent).toBeInstanceOf(ZLinkError);
    expect(sent.code).toBe('InvalidArgument');
    const emitted = await rejectionOf(() => lastValueFrom(client.emit(pattern, {})));
    expect(emitted).toMatchObject({ code: 'InvalidArgument' });
  });

  describe('a subclass overriding serializeResponse() / serializeError(), through ClientsModule', () => {
    let shaping: ShapingProxy;

    beforeAll(async () => {
      const app = await NestFactory.createApplicationContext(
        moduleOf({
          imports: [
            ClientsModule.register([
              {
                name: 'SHAPED',
                customClass: ShapingProxy,
                options: { runtime: client.unwrap<ZLinkRuntime>() },
              },
            ]),
          ],
        }),
        { logger: false, abortOnError: false },
      );
      suite.add(app);
      shaping = app.get<ShapingProxy>('SHAPED');
    });

    afterEach(() => {
      shaping.responses.length = 0;
      shaping.errors.length = 0;
      shaping.failShaping = false;
    });

    it('send() emits what serializeResponse() made of the reply', async () => {
      const reply = await firstValueFrom(
        shaping.send({ channel: ORDERS, packet: 'orders.place' }, { id: 's-1', qty: 2 }),
      );
      expect(reply).toMatchObject({ shaped: { accepted: 's-1', total: 20 } });
      expect(shaping.responses).toEqual([expect.objectContaining({ accepted: 's-1' })]);
      expect(shaping.errors).toEqual([]);
    });

    it('send() fails with what serializeError() made of the failure: a RemoteError, a bad pattern', async () => {
      const remote = await rejectionOf(() =>
        firstValueFrom(shaping.send({ channel: ORDERS, packet: 'orders.reject' }, { as: 'object' })),
      );
      expect(remote).toBeInstanceOf(RpcException);
      expect((remote as RpcException).getError()).toEqual({
        code: 'RemoteError',
        details: { code: 'E_STOCK', message: 'out of stock', sku: 'A-1' },
      });
      expect(shaping.errors).toEqual([expect.objectContaining({ code: 'RemoteError' })]);

      const badPattern = await rejectionOf(() => firstValueFrom(shaping.send({ channel: ORDERS }, {})));
      expect(badPattern).toBeInstanceOf(RpcException);
      expect((badPattern as RpcException).getError()).toMatchObject({ code: 'InvalidArgument' });
      expect(shaping.responses).toEqual([]);
    });

    it('a reply of undefined completes send() without a value and without serializeResponse(), as on Nest transports', async () => {
      const before = seen.placed;
      await expect(
        lastValueFrom(shaping.send({ channel: ORDERS, packet: 'orders.nothing' }, {}), {
          defaultValue: 'no value',
        }),
      ).resolves.toBe('no value');
      expect(seen.placed).toBe(before + 1);
      expect(shaping.responses).toEqual([]);
      await expect(
        firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.nothing' }, {})),
      ).rejects.toBeInstanceOf(EmptyError);
    });

    it('a serializeResponse() that throws fails send() with what it threw', async () => {
      shaping.failShaping = true;
      const error = await rejectionOf(() =>
        firstValueFrom(shaping.send({ channel: ORDERS, packet: 'orders.place' }, { id: 's-2', qty: 1 })),
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe('cannot shape this reply');
      expect(shaping.errors).toEqual([]);
    });

    it("emit() failures and the null-data refusal are not serialized (Nest's emit() and nil check skip it)", async () => {
      const emitted = await rejectionOf(() => lastValueFrom(shaping.emit({ channel: ORDERS }, {})));
      expect(emitted).toBeInstanceOf(ZLinkError);
      expect(emitted).toMatchObject({ code: 'InvalidArgument' });
      const refused = await rejectionOf(() =>
        firstValueFrom(shaping.send({ channel: ORDERS, packet: 'orders.place' }, null)),
      );
      expect(refused).toBeInstanceOf(InvalidMessageException);
      expect(shaping.errors).toEqual([]);
    });
  });

  it.each([
    ['null data', { channel: ORDERS, packet: 'orders.place' }, null],
    ['undefined data', { channel: ORDERS, packet: 'orders.place' }, undefined],
    ['a null pattern', null, { id: 'n', qty: 1 }],
    ['an undefined pattern', undefined, { id: 'n', qty: 1 }],
  ])(
    "send()/emit() with %s → Nest's InvalidMessageException as the error notification, nothing sent",
    async (_name, pattern, data) => {
      const placedBefore = seen.placed;
      // Like Nest's ClientProxy: no synchronous throw; the Observable errors when subscribed.
      const sent$ = client.send(pattern, data);
      const emitted$ = client.emit(pattern, data);
      await expect(firstValueFrom(sent$)).rejects.toBeInstanceOf(InvalidMessageException);
      await expect(lastValueFrom(emitted$)).rejects.toBeInstanceOf(InvalidMessageException);
      // A request sent after them is answered; had they gone out, the handler would have run first.
      await firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'probe', qty: 1 }));
      expect(seen.placed).toBe(placedBefore + 1);
      expect(seen.events).toEqual([]);
    },
  );

  it("ctx.getMetadata() is undefined when the caller set none, like Nest's contexts; ctx.metadata stays a frozen snapshot", async () => {
    const context = { channel: ORDERS, packet: 'orders.context' };
    await expect(firstValueFrom(client.send(context, {}))).resolves.toEqual({
      getMetadataIsUndefined: true,
      getMetadata: null,
      sameSnapshot: true,
      metadata: {},
      metadataFrozen: true,
      messageContextMetadataFrozen: true,
    });

    // An empty record travels as none.
    client.setOnDispatchHook((packet) => {
      packet.metadata = {};
    });
    try {
      await expect(firstValueFrom(client.send(context, {}))).resolves.toMatchObject({
        getMetadataIsUndefined: true,
      });
      client.setOnDispatchHook((packet) => {
        packet.metadata = { 'tenant-id': 't-1' };
      });
      await expect(firstValueFrom(client.send(context, {}))).resolves.toEqual({
        getMetadataIsUndefined: false,
        getMetadata: { 'tenant-id': 't-1' },
        sameSnapshot: true,
        metadata: { 'tenant-id': 't-1' },
        metadataFrozen: true,
        messageContextMetadataFrozen: true,
      });
    } finally {
      client.setOnDispatchHook(() => undefined);
    }

    // A ZLinkRouteClient caller's metadata reads the same way.
    const viaRoute = await client
      .unwrap<ZLinkRuntime>()
      .routeClient.requestToChannel(ORDERS, 'orders.context', {})
      .metadata('tenant-id', 't-2')
      .async<{ getMetadata: unknown }>();
    expect(viaRoute.getMetadata).toEqual({ 'tenant-id': 't-2' });
  });

  it("Nest's processing hooks, once set, wrap each message: start before the handler, end after it, with the ZLinkRpcContext", async () => {
    const hooks: string[] = [];
    server.setOnProcessingStartHook((transportId, context, done) => {
      hooks.push(`start ${String(transportId === ZLINK_TRANSPORT)} ${(context as ZLinkRpcContext).packet}`);
      void done();
    });
    server.setOnProcessingEndHook((_transportId, context) => {
      hooks.push(`end ${(context as ZLinkRpcContext).packet}`);
    });
    await expect(
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'h', qty: 1 })),
    ).resolves.toMatchObject({ accepted: 'h' });
    const failed = await rejectionOf(() =>
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.reject' }, { as: 'object' })),
    );
    expect(failed).toMatchObject({ code: 'RemoteError', details: { code: 'E_STOCK' } });
    expect(hooks).toEqual([
      'start true orders.place',
      'end orders.place',
      'start true orders.reject',
      'end orders.reject',
    ]);
  });

  it('on(type) delivers the runtime events of that type; unwrap() is the runtime', async () => {
    const seenTypes: string[] = [];
    server.on('delivery', (event) => seenTypes.push(`${event.type}:${event.result}`));
    await firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'e', qty: 1 }));
    await waitFor(() => seenTypes.includes('delivery:ok'), 5000, 'a delivery event');
    expect(server.unwrap()).toBeInstanceOf(ZLinkRuntime);
  });
});

describe('ZLinkServer startup and shutdown', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.closeAll());

  async function listenWith(controller: new () => object, options = serverOptions): Promise<unknown> {
    const app = await NestFactory.createMicroservice(moduleOf({ controllers: [controller] }), {
      strategy: new ZLinkServer(options),
      logger: false,
      abortOnError: false,
    });
    cleanup.add(app);
    return rejectionOf(() => app.listen());
  }

  it.each([
    ['a string pattern', 'orders.place', '"orders.place"'],
    ['a missing packet', { channel: ORDERS }, '{"channel":"orders"}'],
    ['an empty packet', { channel: ORDERS, packet: '' }, '{"channel":"orders","packet":""}'],
    ['a non-string channel', { channel: 7, packet: 'p' }, '{"channel":7,"packet":"p"}'],
  ])('%s fails listen() with Configuration naming the pattern', async (_name, pattern, written) => {
    @Controller()
    class BadPattern {
      @MessagePattern(pattern)
      handle(): number {
        return 1;
      }
    }
    const error = await listenWith(BadPattern);
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error).toMatchObject({ code: 'Configuration' });
    expect((error as Error).message).toContain(`@MessagePattern(${written})`);
  });

  it('a pattern on a channel this process does not serve fails listen() with Configuration', async () => {
    @Controller()
    class Unserved {
      @EventPattern({ channel: 'billing', packet: 'billing.charge' })
      handle(): void {}
    }
    const error = await listenWith(Unserved);
    expect(error).toMatchObject({ code: 'Configuration' });
    expect((error as Error).message).toContain("channel 'billing' is not registered in this process");
    expect((error as Error).message).toContain(
      '@EventPattern({"channel":"billing","packet":"billing.charge"})',
    );
  });

  it("Nest's serializer / deserializer options are refused with Configuration naming the option, in either form", () => {
    const codec = { serialize: (value: unknown) => value, deserialize: (value: unknown) => value };
    const refusals = [
      () => new ZLinkServer({ ...serverOptions, serializer: codec } as never),
      () => new ZLinkServer({ runtime: new ZLinkRuntime(), deserializer: codec } as never),
      () =>
        new ZLinkClientProxy({ ...clientOptions(ORDERS, 'tcp://127.0.0.1:1'), deserializer: codec } as never),
      () => new ZLinkClientProxy({ runtime: new ZLinkRuntime(), serializer: codec } as never),
    ];
    const messages = refusals.map((construct) => {
      try {
        construct();
      } catch (error) {
        expect(error).toBeInstanceOf(ZLinkError);
        expect(error).toMatchObject({ code: 'Configuration' });
        return (error as Error).message;
      }
      throw new Error('expected Configuration');
    });
    expect(messages[0]).toMatch(/^ZLinkServer serializer: is not supported/);
    expect(messages[1]).toMatch(/^ZLinkServer deserializer: is not supported/);
    expect(messages[2]).toMatch(/^ZLinkClientProxy deserializer: is not supported/);
    expect(messages[3]).toMatch(/^ZLinkClientProxy serializer: is not supported/);
    expect(messages[0]).toContain('serializeResponse()/serializeError()');
  });

  it('bad ZLinkOptions throw Configuration when the server is constructed', () => {
    expect(() => new ZLinkServer({ requestTimeoutMs: -1 })).toThrow(ZLinkError);
    expect(() => new ZLinkClientProxy({ runtime: new ZLinkRuntime(), requestTimeoutMs: 0 })).toThrow(
      /requestTimeoutMs/,
    );
  });

  it('close() of an owned runtime closes it: calls in flight end, the endpoint stops answering', async () => {
    const { app, server } = await startOrders();
    const runtime = server.unwrap<ZLinkRuntime>();
    const endpoint = runtime.endpoint(ORDERS) as string;
    const { app: clientApp, client } = await bootClientApp('ORDERS', clientOptions(ORDERS, endpoint, 2000));
    cleanup.add(clientApp);
    await expect(
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'c', qty: 1 })),
    ).resolves.toMatchObject({ accepted: 'c' });
    await within(app.close(), 10000, 'microservice close');
    const after = await rejectionOf(() =>
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'd', qty: 1 })),
    );
    expect(after).toBeInstanceOf(ZLinkError);
    expect(['NotFound', 'Unavailable', 'RouteError', 'Timeout', 'Rejected']).toContain(after.code);
    // The proxy's own runtime closes with it: a call afterwards ends Shutdown.
    await client.close();
    const closed = await rejectionOf(() =>
      firstValueFrom(client.send({ channel: ORDERS, packet: 'orders.place' }, { id: 'e', qty: 1 })),
    );
    expect(closed).toMatchObject({ code: 'Shutdown' });
  });
});
