import { describe, expect, it } from '@jest/globals';
import { configError, fieldOf } from '../config-error.js';
import { type ZLinkOptions, normalizeOptions } from '../../../../lib/core/index.js';

/** `sessions.<name>.resumeGraceMs` (docs/sessions.md#resume-after-a-drop): checked at startup. */

const withListener = (extra: Record<string, unknown>): ZLinkOptions => ({
  locationStore: { redis: 'redis://127.0.0.1:6379' },
  meshes: { world: { objectRole: 'client' } },
  sessions: { players: { mesh: 'world', ...extra } },
});
const grace = (extra: Record<string, unknown>) =>
  normalizeOptions(withListener(extra)).sessions.get('players')?.resumeGraceMs;

describe('sessions.<name>.resumeGraceMs', () => {
  it('defaults to 30 s', () => {
    expect(grace({})).toBe(30000);
  });

  it.each([0, 1, 30000, 86_400_000])('%d is accepted (0 turns resume off)', (resumeGraceMs) => {
    expect(grace({ resumeGraceMs })).toBe(resumeGraceMs);
  });

  it.each([-1, 1.5, '30000', null, true])('%p is refused, naming the field', (resumeGraceMs) => {
    expect(fieldOf(configError(withListener({ resumeGraceMs })))).toBe('sessions.players.resumeGraceMs');
  });

  it('more than a day is refused, naming the field and the bound', () => {
    const e = configError(withListener({ resumeGraceMs: 86_400_001 }));
    expect(fieldOf(e)).toBe('sessions.players.resumeGraceMs');
    expect(e.message).toContain('0..86400000');
  });
});
