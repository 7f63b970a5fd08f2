import { describe, expect, it } from '@jest/globals';
import { configError, fieldOf } from '../config-error.js';
import {
  MIN_SESSION_PENDING_BYTES,
  type ZLinkOptions,
  normalizeOptions,
} from '../../../../lib/core/index.js';

/** A session listener's limits are checked at startup: `Configuration` naming the field. */

const withListener = (extra: Record<string, unknown>): ZLinkOptions => ({
  locationStore: { redis: 'redis://127.0.0.1:6379' },
  meshes: { world: { objectRole: 'client' } },
  sessions: { players: { mesh: 'world', ...extra } },
});

describe('sessions.<name>.maxPendingBytes', () => {
  it.each([1, 1024, 34815, MIN_SESSION_PENDING_BYTES - 1])(
    '%d is refused, naming the field',
    (maxPendingBytes) => {
      const e = configError(withListener({ maxPendingBytes }));
      expect(fieldOf(e)).toBe('sessions.players.maxPendingBytes');
      expect(e.message).toContain(`at least ${MIN_SESSION_PENDING_BYTES}`);
    },
  );

  it.each([MIN_SESSION_PENDING_BYTES, 1024 * 1024])('%d is accepted', (maxPendingBytes) => {
    const o = normalizeOptions(withListener({ maxPendingBytes }));
    expect(o.sessions.get('players')?.maxPendingBytes).toBe(maxPendingBytes);
  });

  it('defaults to 1 MiB', () => {
    expect(normalizeOptions(withListener({})).sessions.get('players')?.maxPendingBytes).toBe(1024 * 1024);
  });
});

describe('sessions.<name>.socket', () => {
  it('is refused as unknown: the STREAM listener it chose is gone', () => {
    const e = configError(withListener({ socket: 'zmq-stream' }));
    expect(fieldOf(e)).toBe('sessions.players.socket');
  });
});
