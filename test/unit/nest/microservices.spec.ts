/**
 * The rules of the Nest microservice transport that need no socket: which patterns it routes, how it
 * names a bad one, which options it refuses rather than ignores, what `@Ctx()` reads, and which
 * runtime events `on(type)` hands on. The same transport over real sockets is
 * test/integration/nest/microservice.spec.ts.
 */
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { ZLinkMessageContext } from '../../../lib/core/calls/index.js';
import { ZLinkEvents } from '../../../lib/core/observe/index.js';
import { describePattern, readPattern } from '../../../lib/nest/microservices/patterns.js';
import { runtimeFrom } from '../../../lib/nest/microservices/runtime-option.js';
import { ZLinkRpcContext, onRuntimeEvent } from '../../../lib/nest/microservices/zlink-rpc.context.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';

describe('readPattern: a ZLink pattern is exactly { channel, packet }', () => {
  it('takes a channel and a packet', () => {
    expect(readPattern({ channel: 'orders', packet: 'orders.get' })).toEqual({
      channel: 'orders',
      packet: 'orders.get',
    });
  });

  it.each<[string, unknown, string]>([
    ["Nest's string pattern", 'orders.get', 'must be an object { channel, packet }'],
    ['null', null, 'must be an object { channel, packet }'],
    ['an array', ['orders', 'get'], 'must be an object { channel, packet }'],
    ['a pattern with a cmd', { cmd: 'sum' }, 'has keys other than channel and packet: cmd'],
    [
      'a pattern with extra keys',
      { channel: 'orders', packet: 'get', version: 2, tenant: 'a' },
      'has keys other than channel and packet: version, tenant',
    ],
    ['no channel', { packet: 'get' }, 'channel must be a non-empty string'],
    ['an empty channel', { channel: '', packet: 'get' }, 'channel must be a non-empty string'],
    ['a numeric packet', { channel: 'orders', packet: 7 }, 'packet must be a non-empty string'],
    ['an empty packet', { channel: 'orders', packet: '' }, 'packet must be a non-empty string'],
  ])('refuses %s, saying why', (_what, pattern, why) => {
    expect(readPattern(pattern)).toBe(why);
  });

  it('describes any pattern for an error message, and never throws', () => {
    expect(describePattern('orders.get')).toBe('"orders.get"');
    expect(describePattern({ cmd: 'sum' })).toBe('{"cmd":"sum"}');
    expect(describePattern(undefined)).toBe('undefined');
    const circular: Record<string, unknown> = { channel: 'orders' };
    circular.self = circular;
    expect(describePattern(circular)).toBe('[object Object]');
    expect(describePattern(10n)).toBe('10');
  });
});

describe('runtimeFrom: what ZLinkServer and ZLinkClientProxy serve through', () => {
  it('a given runtime is shared, not owned: its owner starts and closes it', () => {
    const runtime = new ZLinkRuntime();
    expect(runtimeFrom({ runtime }, 'ZLinkServer')).toEqual({ runtime, owned: false });
  });

  it('ZLinkOptions make a new runtime the transport owns', () => {
    const made = runtimeFrom({ requestTimeoutMs: 1234 }, 'ZLinkServer');
    expect(made.owned).toBe(true);
    expect(made.runtime).toBeInstanceOf(ZLinkRuntime);
    expect(made.runtime.options.requestTimeoutMs).toBe(1234);
  });

  it('refuses a runtime that is not a ZLinkRuntime, naming the owner and the option', () => {
    expect(() => runtimeFrom({ runtime: {} }, 'ZLinkClientProxy')).toThrow(
      expect.objectContaining({ code: 'Configuration', details: { field: 'ZLinkClientProxy runtime' } }),
    );
  });

  it.each(['serializer', 'deserializer'])(
    "refuses Nest's %s, beside a runtime or ZLinkOptions alike: there is no Nest envelope to hand it",
    (key) => {
      const codec = { serialize: (v: unknown) => v, deserialize: (v: unknown) => v };
      for (const options of [{ runtime: new ZLinkRuntime(), [key]: codec }, { [key]: codec }])
        expect(() => runtimeFrom(options, 'ZLinkServer')).toThrow(
          expect.objectContaining({ code: 'Configuration', details: { field: `ZLinkServer ${key}` } }),
        );
    },
  );
});

function message(metadata: Record<string, string> = {}, correlation?: number): ZLinkMessageContext {
  return {
    target: 'channel',
    channelName: 'orders',
    kind: correlation === undefined ? 'send' : 'request',
    packet: 'orders.get',
    metadata: Object.freeze({ ...metadata }),
    correlation,
  } as ZLinkMessageContext;
}

describe('ZLinkRpcContext: what @Ctx() gives a @MessagePattern handler', () => {
  it("reads as ZLink's message context and as Nest's RPC context", () => {
    const inner = message({ tenant: 'acme' }, 9);
    const ctx = new ZLinkRpcContext(inner);
    expect([ctx.target, ctx.channelName, ctx.kind, ctx.packet, ctx.correlation]).toEqual([
      'channel',
      'orders',
      'request',
      'orders.get',
      9,
    ]);
    expect(ctx.getPattern()).toEqual({ channel: 'orders', packet: 'orders.get' });
    expect(ctx.getArgs()).toEqual([inner]);
    expect(ctx.getMessageContext()).toBe(inner);
  });

  it("getMetadata() is undefined when the caller set none, as on Nest's contexts; metadata stays a frozen record", () => {
    const none = new ZLinkRpcContext(message());
    expect(none.getMetadata()).toBeUndefined();
    expect(none.metadata).toEqual({});
    expect(Object.isFrozen(none.metadata)).toBe(true);
    const some = new ZLinkRpcContext(message({ tenant: 'acme' }));
    expect(some.getMetadata()).toBe(some.metadata);
    expect(some.getMetadata()).toEqual({ tenant: 'acme' });
  });
});

describe('onRuntimeEvent: on(type, listener) of the server and the client proxy', () => {
  const runtimeWith = (events: ZLinkEvents): ZLinkRuntime => ({ events }) as unknown as ZLinkRuntime;
  const lost = {
    type: 'server_lost',
    channel: 'orders',
    serverRid: 's-1',
    generation: 'g',
    endpoint: 'tcp://127.0.0.1:1',
    weight: 100,
    draining: false,
  } as const;
  const drain = { type: 'drain', channel: 'orders', phase: 'started' } as const;

  it('hands on the events of its type only, until unsubscribed', () => {
    const events = new ZLinkEvents();
    const seen: unknown[] = [];
    const off = onRuntimeEvent(runtimeWith(events), 'server_lost', (e: unknown) => seen.push(e));
    events.emit(drain);
    events.emit(lost);
    off();
    events.emit(lost);
    expect(seen).toEqual([lost]);
  });

  it('asks the message path for per-message events only for selection and delivery', () => {
    const events = new ZLinkEvents();
    const off = onRuntimeEvent(runtimeWith(events), 'server_lost', () => undefined);
    expect(events.perMessage).toBe(false);
    off();
    for (const type of ['selection', 'delivery']) {
      const offMessage = onRuntimeEvent(runtimeWith(events), type, () => undefined);
      expect(events.perMessage).toBe(true);
      offMessage();
      expect(events.perMessage).toBe(false);
    }
  });

  it('refuses a listener that is not a function with InvalidArgument', () => {
    expect(() => onRuntimeEvent(runtimeWith(new ZLinkEvents()), 'drain', 'log')).toThrow(
      expect.objectContaining({ code: 'InvalidArgument', details: { argument: 'listener' } }),
    );
  });
});
