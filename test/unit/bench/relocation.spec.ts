import { describe, expect, it } from '@jest/globals';
import { type RelocationSection, relocationMarkdown, relocationTargets } from '../../../bench/relocation.js';

const section = (over: Partial<RelocationSection>): RelocationSection => ({
  store: 'private redis-server',
  depth: 64,
  moveEveryMs: 50,
  hopSamples: 100,
  moves: 40,
  aborted: 0,
  pauseMs: { p50: 3, p99: 12, max: 20 },
  relocateMs: { p50: 8, p99: 30 },
  baselineReqPerSec: 30_000,
  movingReqPerSec: 25_000,
  duringMoveReqPerSec: 24_000,
  failed: 0,
  detourP50Us: 480,
  directP50Us: 280,
  rawDetourP50Us: 300,
  rawDirectP50Us: 200,
  phases: { moves: 0, steps: [] },
  ...over,
});

describe('bench: the relocation targets', () => {
  it('judges throughput during moves, the follow hop and the pause', () => {
    expect(relocationTargets(section({})).map(([, value, , met]) => [value, met])).toEqual([
      ['0.80×', true],
      ['0.200 ms', true],
      ['12.00 ms', true],
    ]);
    const bad = section({
      duringMoveReqPerSec: 9000,
      detourP50Us: 1080,
      pauseMs: { p50: 9, p99: 50, max: 80 },
    });
    expect(relocationTargets(bad).map(([, value, , met]) => [value, met])).toEqual([
      ['0.30×', false],
      ['0.800 ms', false],
      ['50.00 ms', false],
    ]);
    expect(relocationMarkdown(bad).join('\n')).toContain(
      '| one follow hop over a direct call, p50 | 0.800 ms | ≤ 0.25 ms | FAIL |',
    );
    expect(relocationMarkdown(bad).join('\n')).toContain(
      '| the same hop in raw zeromq.js (the floor) µs | 100.0 (300.0 − 200.0) |',
    );
  });
});
