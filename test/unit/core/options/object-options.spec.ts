import { describe, expect, it } from '@jest/globals';
import { configError, fieldOf } from '../config-error.js';
import {
  CUTOVER_DEADLINE_MS,
  MAX_FOLLOW_HOPS,
  type MeshOptions,
  cacheFollowProblem,
  normalizeOptions,
} from '../../../../lib/core/index.js';

/**
 * The `meshes.<mesh>.objects` option (issue 16 item 4, issue 17 item 2; docs/protocol.md#the-route-cache, docs/protocol.md#message-follow):
 * the route cache, Message Follow and the object queue, checked before any socket opens.
 */

const locationStore = { redis: 'redis://127.0.0.1:6379' };
const objectsOf = (game: MeshOptions) =>
  normalizeOptions({ locationStore, meshes: { game } }).meshes.get('game')?.objects;
const failure = (game: unknown) => configError({ locationStore, meshes: { game } });

describe('meshes.<mesh>.objects', () => {
  it('an object mesh gets the defaults; a plain mesh has no object settings', () => {
    const defaults = {
      routeCacheMaxAgeMs: 15000,
      messageFollowDurationMs: 30000,
      objectQueueLimit: 1024,
      messageFollowNotice: true,
      onDrain: 'relocate',
      multicastMaxEventBytes: 1048576,
    };
    expect(objectsOf({ objectRole: 'server' })).toEqual(defaults);
    expect(objectsOf({ objectRole: 'client', objects: {} })).toEqual(defaults);
    expect(objectsOf({})).toBeUndefined();
    expect(Object.isFrozen(objectsOf({ objectRole: 'server' }))).toBe(true);
  });

  it('the hop limit and the cutover deadline are the spec’s, not options', () => {
    expect(MAX_FOLLOW_HOPS).toBe(8);
    expect(CUTOVER_DEADLINE_MS).toBe(1000);
    expect(failure({ objectRole: 'server', objects: { maxFollowHops: 2 } }).message).toContain(
      'meshes.game.objects.maxFollowHops: unknown option',
    );
  });

  it('takes its settings, 0 turning the cache or Message Follow off', () => {
    expect(
      objectsOf({
        objectRole: 'server',
        objects: {
          routeCacheMaxAgeMs: 0,
          messageFollowDurationMs: 0,
          objectQueueLimit: 1,
          messageFollowNotice: false,
          onDrain: 'deactivate',
          multicastMaxEventBytes: 512,
        },
      }),
    ).toEqual({
      routeCacheMaxAgeMs: 0,
      messageFollowDurationMs: 0,
      objectQueueLimit: 1,
      messageFollowNotice: false,
      onDrain: 'deactivate',
      multicastMaxEventBytes: 512,
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a negative cache age', { routeCacheMaxAgeMs: -1 }, 'routeCacheMaxAgeMs'],
    ['a fractional cache age', { routeCacheMaxAgeMs: 1.5 }, 'routeCacheMaxAgeMs'],
    ['a cache age as a string', { routeCacheMaxAgeMs: '15000' }, 'routeCacheMaxAgeMs'],
    ['a negative follow duration', { messageFollowDurationMs: -5 }, 'messageFollowDurationMs'],
    ['a follow duration of NaN', { messageFollowDurationMs: NaN }, 'messageFollowDurationMs'],
    ['a queue limit of 0', { objectQueueLimit: 0 }, 'objectQueueLimit'],
    ['a fractional queue limit', { objectQueueLimit: 2.5 }, 'objectQueueLimit'],
    ['a notice switch that is not a boolean', { messageFollowNotice: 'no' }, 'messageFollowNotice'],
    ['an unknown drain policy', { onDrain: 'move' }, 'onDrain'],
    ['an event limit of 0', { multicastMaxEventBytes: 0 }, 'multicastMaxEventBytes'],
    ['an event limit as a string', { multicastMaxEventBytes: '1mb' }, 'multicastMaxEventBytes'],
    ['an unknown key', { cutoverDeadlineMs: 500 }, 'cutoverDeadlineMs'],
  ])('%s fails naming meshes.game.objects.%s', (_what, objects, key) => {
    const e = failure({ objectRole: 'server', objects });
    expect(fieldOf(e)).toBe(`meshes.game.objects.${key}`);
  });

  it('objects that is not an object fails naming meshes.game.objects', () => {
    expect(fieldOf(failure({ objectRole: 'server', objects: 15000 }))).toBe('meshes.game.objects');
  });

  describe('the cache must expire 5000 ms before Message Follow ends', () => {
    const withTimes = (routeCacheMaxAgeMs: number, messageFollowDurationMs: number) => ({
      objectRole: 'server' as const,
      objects: { routeCacheMaxAgeMs, messageFollowDurationMs },
    });

    it('follow 30000: a cache age of 25000 is accepted, 25001 is refused with both values', () => {
      expect(objectsOf(withTimes(25000, 30000))?.routeCacheMaxAgeMs).toBe(25000);
      const e = failure(withTimes(25001, 30000));
      expect(fieldOf(e)).toBe('meshes.game.objects.routeCacheMaxAgeMs');
      expect(e.message).toContain('routeCacheMaxAgeMs 25001');
      expect(e.message).toContain('messageFollowDurationMs 30000');
      expect(e.message).toContain('5000');
    });

    it('a cache age over the default follow duration is refused too', () => {
      const e = failure({ objectRole: 'server', objects: { routeCacheMaxAgeMs: 26000 } });
      expect(fieldOf(e)).toBe('meshes.game.objects.routeCacheMaxAgeMs');
    });

    it('with either at 0 there is no relation', () => {
      expect(objectsOf(withTimes(60000, 0))).toMatchObject({ routeCacheMaxAgeMs: 60000 });
      expect(objectsOf(withTimes(0, 1))).toMatchObject({ messageFollowDurationMs: 1 });
    });

    it('a follow duration under 5000 leaves no room for a cache', () => {
      expect(fieldOf(failure(withTimes(1, 4999)))).toBe('meshes.game.objects.routeCacheMaxAgeMs');
    });

    it('is one rule, reusable for a change at run time', () => {
      expect(cacheFollowProblem(25000, 30000)).toBeUndefined();
      expect(cacheFollowProblem(25001, 30000)).toContain('25000');
      expect(cacheFollowProblem(0, 30000)).toBeUndefined();
      expect(cacheFollowProblem(99999, 0)).toBeUndefined();
    });
  });

  it("objects on a mesh whose objectRole is 'none' fails naming meshes.game.objects", () => {
    const e = failure({ objects: { routeCacheMaxAgeMs: 1000 } });
    expect(fieldOf(e)).toBe('meshes.game.objects');
    expect(e.message).toContain("'none'");
    expect(fieldOf(failure({ objectRole: 'none', objects: {} }))).toBe('meshes.game.objects');
  });

  it('a second mesh with an object role fails naming it and the first', () => {
    const e = configError({
      locationStore,
      meshes: { world: { objectRole: 'server' }, chat: {}, lobby: { objectRole: 'client' } },
    });
    expect(fieldOf(e)).toBe('meshes.lobby.objectRole');
    expect(e.message).toContain('meshes.world');
  });
});
