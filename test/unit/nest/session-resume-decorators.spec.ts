import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { OnSessionDropped, OnSessionResumed } from '../../../lib/nest/decorators/index.js';
import { ZLinkMetadataAccessor } from '../../../lib/nest/zlink-metadata.accessor.js';
import { SessionHooks } from '../../../lib/core/index.js';

/** `@OnSessionDropped` / `@OnSessionResumed` (docs/sessions.md#resume-after-a-drop): marks and their checks. */

const accessor = new ZLinkMetadataAccessor();

describe('session resume hooks', () => {
  it('record the listener and the hook', () => {
    class Game {
      @OnSessionDropped('game')
      away(): void {}

      @OnSessionResumed('game')
      back(): void {}
    }
    expect(accessor.sessionHooks(Game.prototype.away)).toEqual([{ listener: 'game', hook: 'dropped' }]);
    expect(accessor.sessionHooks(Game.prototype.back)).toEqual([{ listener: 'game', hook: 'resumed' }]);
  });

  it('an empty listener is Configuration naming the decorator', () => {
    expect(() => {
      class Game {
        @OnSessionDropped('')
        away(): void {}
      }
      return Game;
    }).toThrow(
      expect.objectContaining({ code: 'Configuration', message: expect.stringContaining('listener') }),
    );
  });

  it('one of each per listener: a second is Configuration naming both places', () => {
    const hooks = new SessionHooks();
    hooks.register({ listener: 'game', hook: 'resumed', fn: () => undefined, source: 'A.back' });
    expect(() =>
      hooks.register({ listener: 'game', hook: 'resumed', fn: () => undefined, source: 'B.back' }),
    ).toThrow(
      expect.objectContaining({
        code: 'Configuration',
        details: { field: '@OnSessionResumed game' },
        message: expect.stringContaining('A.back and B.back'),
      }),
    );
  });
});
