import { describe, expect, it } from '@jest/globals';
import { MOVE_STEPS, movePhases, movePhasesMarkdown } from '../../../bench/relocation-phases.js';
import type { MoveMark } from '../../../bench/systems/zlink-relocation.js';

/** A move at `t0`: call, seal at +2, relay-ready at +3, opened at +4, committed at +5, returned at +6. */
const marksAt = (t0: number): MoveMark[] => [
  { phase: 'started', at: t0 + 2 },
  { phase: 'relayReady', at: t0 + 3 },
  { phase: 'opened', at: t0 + 4 },
  { phase: 'committed', at: t0 + 5 },
];

describe('bench: where a move’s time goes', () => {
  it('cuts each window at the marks inside it and rates the answers of each step against the baseline', () => {
    // 10 answers a ms without moves. Move 1: 20 answers before the seal, none sealed, 5 after the commit.
    const replies = [
      ...Array.from({ length: 20 }, (_, i) => 100 + i / 10),
      ...Array.from({ length: 5 }, (_, i) => 105 + i / 10),
    ];
    const windows = [
      { start: 100, end: 106, replies },
      { start: 200, end: 206, replies: [] },
    ];
    // The second move's marks, and one of an unrelated move outside any window.
    const marks = [...marksAt(200), ...marksAt(100), { phase: 'started' as const, at: 150 }];
    const p = movePhases(windows, marks, 10);
    expect(p.moves).toBe(2);
    expect(p.steps.map((s) => s.medianMs)).toEqual([2, 1, 1, 1, 1]);
    // Two moves: 20 answers over 4 ms of "before the seal" at 10/ms → 0.5×; 5 over 2 ms of the last step → 0.25×.
    expect(p.steps.map((s) => s.rateVsBaseline)).toEqual([0.5, 0, 0, 0, 0.25]);
    expect(movePhasesMarkdown(p).join('\n')).toContain(`| ${MOVE_STEPS[0].name} | 2.00 | 33 % | 0.50× |`);
  });

  it('leaves out a move missing a step (an aborted move has no commit)', () => {
    const marks = marksAt(100).filter((m) => m.phase !== 'committed');
    const p = movePhases([{ start: 100, end: 106, replies: [] }], marks, 10);
    expect(p.moves).toBe(0);
    expect(movePhasesMarkdown(p)[0]).toContain('no move under load had every step');
  });
});
