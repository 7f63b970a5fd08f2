import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable, type Type } from '@nestjs/common';
import {
  Actor,
  ActorHandler,
  MemoryLocationStore,
  MemoryRelocationStore,
  Spot,
  SpotHandler,
  SpotSubscribe,
  ZLinkError,
  ZLinkModule,
  type ZLinkOptions,
  ZLinkRuntime,
} from '../../../lib/index.js';
import { ZLinkHandlerExplorer } from '../../../lib/nest/handler.explorer.js';
import { bootApp, localOptions, rejectionOf } from './nest-app.js';

/** A process hosting objects, with an in-memory Location Store: no socket opens before start. */
function objectOptions(): ZLinkOptions {
  return {
    meshes: { game: { objectRole: 'server', listen: { bindHost: '127.0.0.1' } } },
    locationStore: { instance: new MemoryLocationStore() },
  };
}

@Injectable()
class Greeter {
  hello(): string {
    return 'hi';
  }
}

@Spot('room', { relocatable: false })
class RoomSpot {
  static built = 0;
  constructor(readonly greeter: Greeter) {
    RoomSpot.built += 1;
  }

  @SpotHandler('join')
  join(): string {
    return this.greeter.hello();
  }

  @SpotSubscribe('lobby')
  @SpotHandler('milestone', { kind: 'send' })
  milestone(): void {}

  @SpotSubscribe('lobby', 'news')
  @SpotHandler('news-item', { kind: 'send' })
  news(): void {}

  onActivate(): void {}
  capture(): object {
    return {};
  }
  onActorJoin(): void {}
}

@Actor('player')
class PlayerActor {
  @ActorHandler('move', { kind: 'send' })
  move(): void {}

  @ActorHandler('move')
  moveAndTell(): void {}

  onDeactivate(): void {}
  restore(): void {}
}

/** Runs module init only (discovery and the startup checks), never application bootstrap. */
async function discover(options: ZLinkOptions, providers: Type[]) {
  const built: { runtime?: ZLinkRuntime } = {};
  @Injectable()
  class Probe {
    constructor(runtime: ZLinkRuntime) {
      built.runtime = runtime;
    }
  }
  const error = await rejectionOf(() =>
    bootApp({ zlink: ZLinkModule.forRoot(options), providers: [Probe, ...providers] }),
  );
  return { error, runtime: built.runtime };
}

describe('declaring Spots and Actors in Nest (issue 16 item 1)', () => {
  it('discovers object classes into plain descriptions, without building an instance', async () => {
    const app = await bootApp({
      zlink: ZLinkModule.forRoot(objectOptions()),
      providers: [Greeter, RoomSpot, PlayerActor],
    });
    try {
      const registry = app.get(ZLinkHandlerExplorer).objectClasses();
      const room = registry?.get('spot', 'room');
      expect(room).toMatchObject({
        kind: 'spot',
        type: 'room',
        token: RoomSpot,
        source: 'RoomSpot',
        options: { relocatable: false },
        hooks: {
          onActivate: true,
          onDeactivate: false,
          capture: true,
          restore: false,
          onActorJoin: true,
          onActorLeave: false,
        },
      });
      expect(room?.handlers).toEqual([
        { packet: 'join', kind: 'request', method: 'join', source: 'RoomSpot.join' },
        { packet: 'milestone', kind: 'send', method: 'milestone', source: 'RoomSpot.milestone' },
        { packet: 'news-item', kind: 'send', method: 'news', source: 'RoomSpot.news' },
      ]);
      expect(room?.subscriptions).toEqual([
        { channel: 'lobby', topic: 'milestone', method: 'milestone', source: 'RoomSpot.milestone' },
        { channel: 'lobby', topic: 'news', method: 'news', source: 'RoomSpot.news' },
      ]);
      const player = registry?.get('actor', 'player');
      expect(player?.hooks).toEqual({
        onActivate: false,
        onDeactivate: true,
        capture: false,
        restore: true,
        onActorJoin: false,
        onActorLeave: false,
        onSessionClosed: false,
        onSessionDropped: false,
        onSessionResumed: false,
      });
      expect(registry?.handler('actor', 'player', 'send', 'move')?.method).toBe('move');
      expect(registry?.handler('actor', 'player', 'request', 'move')?.method).toBe('moveAndTell');
      expect(RoomSpot.built).toBe(0);
      // Transient: each resolve builds a new instance through DI, none was built as a singleton.
      const a = await app.resolve(RoomSpot);
      const b = await app.resolve(RoomSpot);
      expect(a).not.toBe(b);
      expect(a.join()).toBe('hi');
    } finally {
      await app.close();
    }
  });

  it('an empty type, or an option that is not one, throws Configuration when the class is defined', () => {
    expect(() => Spot('')(class Empty {})).toThrow(/@Spot on Empty.*type must be a non-empty string/);
    expect(() => Spot('room', { relocateable: true } as object)(class Typo {})).toThrow(
      /@Spot on Typo options\.relocateable: is not an option \(relocatable, persist\)/,
    );
    expect(() => Actor('p', { relocatable: 'yes' } as object)(class Loose {})).toThrow(
      /options\.relocatable: must be a boolean/,
    );
    expect(() => SpotHandler('')({}, 'm', { value: () => 0 })).toThrow(ZLinkError);
    expect(() => SpotSubscribe('', 'news')({}, 'm', { value: () => 0 })).toThrow(/channelName must be/);
  });

  const cases: [string, () => Type[], RegExp][] = [
    [
      'a handler on a class without @Spot/@Actor',
      () => {
        @Injectable()
        class Loose {
          @SpotHandler('join')
          join(): void {}
        }
        return [Loose];
      },
      /@SpotHandler on Loose\.join.*no @Spot or @Actor/,
    ],
    [
      'two classes for one (kind, type)',
      () => {
        @Spot('room')
        class OtherRoom {}
        return [Greeter, RoomSpot, OtherRoom];
      },
      /@Spot\('room'\).*declared twice: RoomSpot and OtherRoom/,
    ],
    [
      'two handlers for one (type, packet, kind)',
      () => {
        @Actor('twice')
        class Twice {
          @ActorHandler('hit')
          a(): void {}
          @ActorHandler('hit')
          b(): void {}
        }
        return [Twice];
      },
      /actor twice\/request\/hit.*declared twice: Twice\.a and Twice\.b/,
    ],
    [
      '@ActorHandler on a @Spot class',
      () => {
        @Spot('mixed')
        class Mixed {
          @ActorHandler('hit')
          hit(): void {}
        }
        return [Mixed];
      },
      /@ActorHandler on Mixed\.hit.*@Spot\('mixed'\)/,
    ],
    [
      '@SpotSubscribe on an Actor',
      () => {
        @Actor('listener')
        class Listener {
          @SpotSubscribe('lobby')
          @ActorHandler('news', { kind: 'send' })
          news(): void {}
        }
        return [Listener];
      },
      /@SpotSubscribe on Listener\.news.*only Spots/,
    ],
    [
      '@SpotSubscribe on a method without @SpotHandler',
      () => {
        @Spot('deaf')
        class Deaf {
          @SpotSubscribe('lobby')
          news(): void {}
        }
        return [Deaf];
      },
      /@SpotSubscribe on Deaf\.news.*needs a @SpotHandler/,
    ],
    [
      'a singleton object class (@Injectable above @Spot)',
      () => {
        @Injectable()
        @Spot('single')
        class Single {}
        return [Single];
      },
      /@Spot\('single'\) Single.*must stay transient/,
    ],
  ];
  for (const [name, classes, message] of cases) {
    it(`${name} fails the bootstrap with Configuration naming it`, async () => {
      const { error } = await discover(objectOptions(), classes());
      expect(error).toBeInstanceOf(ZLinkError);
      expect(error.code).toBe('Configuration');
      expect(error.message).toMatch(message);
    });
  }
});

describe('object classes need an object mesh and a Location Store (issue 16 item 10)', () => {
  it("no mesh with objectRole 'server' → Configuration naming the class and the option, before any socket opens", async () => {
    const { error, runtime } = await discover(localOptions('billing'), [Greeter, RoomSpot]);
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.code).toBe('Configuration');
    expect(error.message).toMatch(/@Spot\('room'\) RoomSpot.*locationStore/);
    // The check ran on module init: start() never bound the billing server.
    expect(runtime?.endpoint('billing')).toBeUndefined();
  });

  it('a store but the object mesh is only a client → Configuration naming meshes.<mesh>.objectRole', async () => {
    const options: ZLinkOptions = {
      ...localOptions('billing'),
      meshes: { game: { objectRole: 'client', listen: { bindHost: '127.0.0.1' } } },
      locationStore: { instance: new MemoryLocationStore() },
    };
    const { error, runtime } = await discover(options, [PlayerActor]);
    expect(error.code).toBe('Configuration');
    expect(error.message).toMatch(
      /@Actor\('player'\) PlayerActor.*meshes\.game\.objectRole is 'client'.*'server'/,
    );
    expect(runtime?.endpoint('billing')).toBeUndefined();
  });

  it('a relocatable class without a Relocation Store → Configuration naming relocationStore, before any socket opens', async () => {
    @Spot('moving', { relocatable: true })
    class MovingSpot {}
    const { error, runtime } = await discover(objectOptions(), [MovingSpot]);
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.code).toBe('Configuration');
    expect(error.message).toMatch(/^relocationStore: @Spot\('moving'\) MovingSpot is relocatable/);
    expect((error.details as { field?: string }).field).toBe('relocationStore');
    expect(runtime?.snapshot().objects).toBeUndefined();
    // With one registered, the same class boots.
    const app = await bootApp({
      zlink: ZLinkModule.forRoot({
        ...objectOptions(),
        relocationStore: { instance: new MemoryRelocationStore() },
      }),
      providers: [MovingSpot],
    });
    await app.close();
  });

  it("a store and no object mesh → Configuration saying objectRole: 'server' is missing", async () => {
    const options: ZLinkOptions = {
      ...localOptions('billing'),
      locationStore: { instance: new MemoryLocationStore() },
    };
    const { error } = await discover(options, [PlayerActor]);
    expect(error.code).toBe('Configuration');
    expect(error.message).toMatch(/PlayerActor.*objectRole: 'server'/);
  });

  it("objectRole 'server' without a Location Store → Configuration naming the option, from option validation", async () => {
    const options: ZLinkOptions = { meshes: { game: { objectRole: 'server' } } };
    const { error, runtime } = await discover(options, [RoomSpot, Greeter]);
    expect(error.code).toBe('Configuration');
    expect(error.message).toMatch(/meshes\.game\.objectRole.*needs a locationStore/);
    expect(runtime).toBeUndefined();
  });
  it("objectRole 'client' without a Location Store → Configuration naming the option, before any runtime exists", async () => {
    const options: ZLinkOptions = {
      ...localOptions('billing'),
      meshes: { game: { objectRole: 'client', listen: { bindHost: '127.0.0.1' } } },
    };
    const { error, runtime } = await discover(options, []);
    expect(error).toBeInstanceOf(ZLinkError);
    expect(error.code).toBe('Configuration');
    expect(error.message).toMatch(/meshes\.game\.objectRole.*needs a locationStore/);
    expect(runtime).toBeUndefined();
  });

  const badCache: [string, Record<string, number>, RegExp][] = [
    [
      'a cache age closer than 5000 ms to the Message Follow duration',
      { routeCacheMaxAgeMs: 25001, messageFollowDurationMs: 30000 },
      /meshes\.game\.objects\.routeCacheMaxAgeMs.*25001 must be <= messageFollowDurationMs 30000 - 5000/,
    ],
    [
      'a cache age over the default Message Follow duration',
      { routeCacheMaxAgeMs: 40000 },
      /meshes\.game\.objects\.routeCacheMaxAgeMs.*40000 must be <= messageFollowDurationMs 30000/,
    ],
    ['a negative cache age', { routeCacheMaxAgeMs: -1 }, /meshes\.game\.objects\.routeCacheMaxAgeMs/],
    ['an object queue of 0', { objectQueueLimit: 0 }, /meshes\.game\.objects\.objectQueueLimit/],
  ];
  for (const [name, objects, message] of badCache) {
    it(`${name} → Configuration naming the field, before any runtime exists`, async () => {
      const options: ZLinkOptions = {
        ...localOptions('billing'),
        meshes: { game: { objectRole: 'server', listen: { bindHost: '127.0.0.1' }, objects } },
        locationStore: { instance: new MemoryLocationStore() },
      };
      const { error, runtime } = await discover(options, [Greeter, RoomSpot]);
      expect(error).toBeInstanceOf(ZLinkError);
      expect(error.code).toBe('Configuration');
      expect(error.message).toMatch(message);
      // Refused while the options were read: no runtime, so no socket (the billing server never bound).
      expect(runtime).toBeUndefined();
    });
  }
});
