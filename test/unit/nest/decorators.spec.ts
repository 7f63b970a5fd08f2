/**
 * What the decorators record and what they refuse when a class is defined: the bootstrap reads only
 * this metadata, so a handler the metadata misses is a handler that never runs, and a bad argument
 * caught here is one the user sees at the line they wrote, not at start-up.
 */
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Scope } from '@nestjs/common';
import { ROUTE_ARGS_METADATA, SCOPE_OPTIONS_METADATA } from '@nestjs/common/constants.js';
import { RpcParamtype } from '@nestjs/microservices/enums/rpc-paramtype.enum.js';
import {
  Actor,
  ActorHandler,
  ChannelHandler,
  FanoutHandler,
  NodeHandler,
  OnSessionClose,
  OnSessionOpen,
  SessionHandler,
  Spot,
  SpotHandler,
  SpotSubscribe,
  ZLinkContext,
  ZLinkPayload,
  ZLinkSession,
} from '../../../lib/nest/decorators/index.js';
import {
  ZLINK_ACTOR_HANDLER,
  ZLINK_OBJECT_CLASS,
  ZLINK_SPOT_HANDLER,
  ZLINK_SPOT_SUBSCRIBE,
  ZLinkParamtype,
} from '../../../lib/nest/decorators/zlink.constants.js';
import { ZLinkMetadataAccessor } from '../../../lib/nest/zlink-metadata.accessor.js';
import { ZLinkParamsFactory } from '../../../lib/nest/zlink-params.factory.js';

const accessor = new ZLinkMetadataAccessor();
/** A `Configuration` error whose field is `field` (where the user wrote it) and whose message says `text`. */
const refusal = (field: string, text: string) =>
  expect.objectContaining({
    code: 'Configuration',
    details: { field },
    message: expect.stringContaining(text),
  });

/** Applies `decorator` to a method `handle` of a fresh class named `Orders`, as `@decorator` would. */
function decorate(decorator: MethodDecorator): () => void {
  class Orders {
    handle(): void {}
  }
  const descriptor = Object.getOwnPropertyDescriptor(Orders.prototype, 'handle') as PropertyDescriptor;
  decorator(Orders.prototype, 'handle', descriptor);
  return Orders.prototype.handle;
}

describe('handler decorators record what the bootstrap registers', () => {
  it("@ChannelHandler records channel, packet and kind ('request' unless told)", () => {
    class Orders {
      @ChannelHandler('orders', 'orders.get')
      get(): void {}

      @ChannelHandler('orders', 'orders.note', { kind: 'send' })
      note(): void {}
    }
    expect(accessor.channelHandlers(Orders.prototype.get)).toEqual([
      { channel: 'orders', packet: 'orders.get', kind: 'request' },
    ]);
    expect(accessor.channelHandlers(Orders.prototype.note)).toEqual([
      { channel: 'orders', packet: 'orders.note', kind: 'send' },
    ]);
  });

  it('a method may carry several handlers, of several decorators, listed bottom-up; each entry is frozen', () => {
    class Orders {
      @ChannelHandler('orders', 'a')
      @ChannelHandler('orders', 'b')
      @NodeHandler('mesh', 'c')
      @SessionHandler('game', 'd', { kind: 'send' })
      handle(): void {}
    }
    const handle = Orders.prototype.handle;
    // Decorators run bottom-up: the one nearest the method is listed first.
    expect(accessor.channelHandlers(handle).map((h) => h.packet)).toEqual(['b', 'a']);
    expect(accessor.nodeHandlers(handle)).toEqual([{ mesh: 'mesh', packet: 'c', kind: 'request' }]);
    expect(accessor.sessionHandlers(handle)).toEqual([{ listener: 'game', packet: 'd', kind: 'send' }]);
    expect(accessor.count(handle)).toBe(4);
    for (const entry of accessor.channelHandlers(handle)) expect(Object.isFrozen(entry)).toBe(true);
  });

  it('@FanoutHandler records channel and packet: fanout is one-way, so there is no kind to choose', () => {
    const handle = decorate(FanoutHandler('prices', 'tick'));
    expect(accessor.fanoutHandlers(handle)).toEqual([{ channel: 'prices', packet: 'tick' }]);
  });

  it('@OnSessionOpen / @OnSessionClose record the listener and the hook', () => {
    class Game {
      @OnSessionOpen('game')
      admit(): boolean {
        return true;
      }

      @OnSessionClose('game')
      left(): void {}
    }
    expect(accessor.sessionHooks(Game.prototype.admit)).toEqual([{ listener: 'game', hook: 'open' }]);
    expect(accessor.sessionHooks(Game.prototype.left)).toEqual([{ listener: 'game', hook: 'close' }]);
  });

  it('a method without ZLink decorators, or something that is not a method, reads as none', () => {
    class Plain {
      handle(): void {}
    }
    expect(accessor.channelHandlers(Plain.prototype.handle)).toEqual([]);
    expect(accessor.count(Plain.prototype.handle)).toBe(0);
    expect(accessor.count(undefined)).toBe(0);
    expect(accessor.sessionHooks('handle')).toEqual([]);
  });

  it('@SpotHandler, @ActorHandler and @SpotSubscribe record under their own keys; the topic may be left out', () => {
    const spot = decorate(SpotHandler('move', { kind: 'send' }));
    const actor = decorate(ActorHandler('buy'));
    const subscribed = decorate(SpotSubscribe('world'));
    const named = decorate(SpotSubscribe('world', 'weather'));
    expect(Reflect.getMetadata(ZLINK_SPOT_HANDLER, spot)).toEqual([{ packet: 'move', kind: 'send' }]);
    expect(Reflect.getMetadata(ZLINK_ACTOR_HANDLER, actor)).toEqual([{ packet: 'buy', kind: 'request' }]);
    expect(Reflect.getMetadata(ZLINK_SPOT_HANDLER, actor)).toBeUndefined();
    expect(Reflect.getMetadata(ZLINK_SPOT_SUBSCRIBE, subscribed)).toEqual([
      { channel: 'world', topic: undefined },
    ]);
    expect(Reflect.getMetadata(ZLINK_SPOT_SUBSCRIBE, named)).toEqual([
      { channel: 'world', topic: 'weather' },
    ]);
  });
});

describe('handler decorators refuse bad arguments when the class is defined', () => {
  it.each<[string, () => MethodDecorator, string]>([
    ['an empty channel', () => ChannelHandler('', 'p'), 'channelName must be a non-empty string'],
    ['a channel with NUL', () => ChannelHandler('a\0b', 'p'), 'channelName must be a non-empty string'],
    ['an empty packet', () => ChannelHandler('orders', ''), 'packetName must be a non-empty string'],
    ['a packet that is not a string', () => ChannelHandler('orders', 7 as unknown as string), 'got 7'],
    [
      'an unknown kind',
      () => ChannelHandler('orders', 'p', { kind: 'publish' as 'send' }),
      `kind must be 'request' or 'send', got "publish"`,
    ],
    ['an empty mesh', () => NodeHandler('', 'p'), 'meshName must be a non-empty string'],
    ['an empty fanout channel', () => FanoutHandler('', 'p'), 'channelName must be a non-empty string'],
    ['an empty session listener', () => SessionHandler('', 'p'), 'listener must be a non-empty string'],
    ['an empty hook listener', () => OnSessionOpen(''), 'listener must be a non-empty string'],
    ['an empty Spot packet', () => SpotHandler(''), 'packetName must be a non-empty string'],
    ['an empty subscribed channel', () => SpotSubscribe(''), 'channelName must be a non-empty string'],
    ['an empty topic', () => SpotSubscribe('world', ''), 'topic must be a non-empty string'],
  ])('%s: Configuration naming the decorator, the class and the method', (_what, make, text) => {
    const decorator = make();
    const name = /^@\w+ on Orders\.handle$/;
    expect(() => decorate(decorator)).toThrow(
      expect.objectContaining({
        code: 'Configuration',
        details: { field: expect.stringMatching(name) },
        message: expect.stringContaining(text),
      }),
    );
  });

  it('refuses a decorated accessor: only a method can be a handler', () => {
    class Orders {
      get value(): number {
        return 1;
      }
    }
    const descriptor = Object.getOwnPropertyDescriptor(Orders.prototype, 'value') as PropertyDescriptor;
    expect(() => ChannelHandler('orders', 'p')(Orders.prototype, 'value', descriptor)).toThrow(
      refusal('@ChannelHandler on Orders.value', 'must decorate a method'),
    );
  });
});

describe('@Spot / @Actor', () => {
  it('record kind, type and frozen options, and make the class a transient provider', () => {
    @Spot('room', { relocatable: true })
    class Room {}
    @Actor('player')
    class Player {}
    const room = Reflect.getMetadata(ZLINK_OBJECT_CLASS, Room);
    expect(room).toEqual({ kind: 'spot', type: 'room', options: { relocatable: true } });
    expect(Object.isFrozen(room) && Object.isFrozen(room.options)).toBe(true);
    expect(Reflect.getMetadata(ZLINK_OBJECT_CLASS, Player)).toEqual({
      kind: 'actor',
      type: 'player',
      options: {},
    });
    // One instance per activation, built through DI: Nest must never share one.
    for (const cls of [Room, Player])
      expect(Reflect.getMetadata(SCOPE_OPTIONS_METADATA, cls)).toEqual({ scope: Scope.TRANSIENT });
  });

  it('the options are copied: changing the object given later changes nothing', () => {
    const options = { relocatable: false };
    @Spot('room', options)
    class Room {}
    options.relocatable = true;
    expect(Reflect.getMetadata(ZLINK_OBJECT_CLASS, Room).options).toEqual({ relocatable: false });
    const persist = { maxBytes: 4096 };
    @Actor('player', { persist })
    class Player {}
    persist.maxBytes = 1;
    expect(Reflect.getMetadata(ZLINK_OBJECT_CLASS, Player).options).toEqual({ persist: { maxBytes: 4096 } });
  });

  it.each<[string, () => ClassDecorator, string, string]>([
    ['an empty type', () => Spot(''), '@Spot on Room', 'type must be a non-empty string'],
    ['a type with NUL', () => Actor('a\0'), '@Actor on Room', 'type must be a non-empty string'],
    [
      'an unknown option',
      () => Spot('room', { sticky: true } as object),
      '@Spot on Room options.sticky',
      'is not an option',
    ],
    [
      'a relocatable that is not a boolean',
      () => Spot('room', { relocatable: 'yes' as unknown as boolean }),
      '@Spot on Room options.relocatable',
      'must be a boolean',
    ],
    [
      'a persist maxBytes out of range',
      () => Actor('player', { persist: { maxBytes: 10 } }),
      '@Actor on Room options.persist.maxBytes',
      'must be an integer from 1024 to 67108864',
    ],
    [
      'options that are not an object',
      () => Actor('player', [] as object),
      '@Actor on Room options',
      'must be an object',
    ],
  ])('refuses %s with Configuration naming the class', (_what, make, field, text) => {
    class Room {}
    expect(() => make()(Room)).toThrow(refusal(field, text));
    expect(Reflect.getMetadata(ZLINK_OBJECT_CLASS, Room)).toBeUndefined();
  });

  it('refuses a second @Spot or @Actor on one class', () => {
    @Spot('room')
    class Room {}
    expect(() => Actor('player')(Room)).toThrow(
      refusal('@Actor on Room', 'a class takes one @Spot or @Actor'),
    );
    expect(() => Spot('hall')(Room)).toThrow('a class takes one @Spot or @Actor');
    expect(Reflect.getMetadata(ZLINK_OBJECT_CLASS, Room)).toMatchObject({ kind: 'spot', type: 'room' });
  });
});

describe('parameter decorators and the params factory', () => {
  it("ZLink's parameter types are Nest's: @Payload() and @Ctx() resolve to the same arguments", () => {
    expect(ZLinkParamtype.PAYLOAD).toBe(RpcParamtype.PAYLOAD);
    expect(ZLinkParamtype.CONTEXT).toBe(RpcParamtype.CONTEXT);
    expect(Object.values(RpcParamtype)).not.toContain(ZLinkParamtype.SESSION);
  });

  it('@ZLinkPayload records its property and pipes at the parameter index; @ZLinkContext and @ZLinkSession their type', () => {
    class Pipe {
      transform(v: unknown): unknown {
        return v;
      }
    }
    const pipe = new Pipe();
    class Orders {
      whole(@ZLinkPayload(pipe) _payload: unknown, @ZLinkContext() _ctx: unknown): void {}
      one(@ZLinkSession() _session: unknown, @ZLinkPayload('orderId', Pipe) _id: unknown): void {}
    }
    const whole = Reflect.getMetadata(ROUTE_ARGS_METADATA, Orders, 'whole');
    expect(whole).toEqual({
      [`${ZLinkParamtype.PAYLOAD}:0`]: { index: 0, data: undefined, pipes: [pipe] },
      [`${ZLinkParamtype.CONTEXT}:1`]: { index: 1, data: undefined, pipes: [] },
    });
    const one = Reflect.getMetadata(ROUTE_ARGS_METADATA, Orders, 'one');
    expect(one).toEqual({
      [`${ZLinkParamtype.SESSION}:0`]: { index: 0, data: undefined, pipes: [] },
      [`${ZLinkParamtype.PAYLOAD}:1`]: { index: 1, data: 'orderId', pipes: [Pipe] },
    });
  });

  it('the factory hands the payload, one property of it, the context or the session', () => {
    const factory = new ZLinkParamsFactory();
    const payload = { orderId: 'o-1', total: 5 };
    const ctx = { session: { id: 's-1' } };
    const args = [payload, ctx];
    expect(factory.exchangeKeyForValue(ZLinkParamtype.PAYLOAD, undefined, args)).toBe(payload);
    expect(factory.exchangeKeyForValue(ZLinkParamtype.PAYLOAD, '', args)).toBe(payload);
    expect(factory.exchangeKeyForValue(ZLinkParamtype.PAYLOAD, 'orderId', args)).toBe('o-1');
    expect(factory.exchangeKeyForValue(ZLinkParamtype.CONTEXT, undefined, args)).toBe(ctx);
    expect(factory.exchangeKeyForValue(ZLinkParamtype.SESSION, undefined, args)).toEqual({ id: 's-1' });
    // A property of a missing payload is undefined, not a TypeError in the user's handler.
    expect(factory.exchangeKeyForValue(ZLinkParamtype.PAYLOAD, 'orderId', [null, ctx])).toBeUndefined();
    expect(factory.exchangeKeyForValue(ZLinkParamtype.PAYLOAD, 'orderId', [undefined, ctx])).toBeUndefined();
    // Outside a session, @ZLinkSession() is undefined.
    expect(factory.exchangeKeyForValue(ZLinkParamtype.SESSION, undefined, [payload, {}])).toBeUndefined();
    expect(factory.exchangeKeyForValue(RpcParamtype.GRPC_CALL, undefined, args)).toBeNull();
    expect(factory.exchangeKeyForValue(ZLinkParamtype.PAYLOAD, undefined, undefined)).toBeNull();
  });
});
