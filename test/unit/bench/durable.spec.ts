import { describe, expect, it } from '@jest/globals';
import { parseOptions } from '../../../bench/options.js';
import {
  type DurableRun,
  type DurableRuns,
  durableMarkdown,
  summarizeDurable,
} from '../../../bench/durable-report.js';
import type { DurableTarget } from '../../../bench/systems/zlink-durable.js';
import { MACHINE } from './fixtures.js';

const pipelined = (target: DurableTarget, rep: number, reqPerSec: number, writes?: number): DurableRun => ({
  target,
  workload: 'pipelined',
  rep,
  result: {
    workload: 'pipelined',
    requests: reqPerSec,
    elapsedMs: 1000,
    reqPerSec,
    cost: { client: { allocBytes: 0, cpuUs: 10 }, server: { allocBytes: 0, cpuUs: 20 } },
  },
  ...(writes !== undefined && { writes }),
  ...(target === 'redis' && writes !== undefined && { redis: { evalshaUs: 20, cpuUsPerWrite: 25 } }),
});

const sequential = (target: DurableTarget, p50Us: number): DurableRun => ({
  target,
  workload: 'sequential',
  rep: 1,
  result: {
    workload: 'sequential',
    requests: 1000,
    elapsedMs: 1000,
    reqPerSec: 1000,
    p50Us,
    p99Us: p50Us * 3,
  },
});

const fill = { ms: 5000, failed: 0, mismatched: 0, errors: [] };

const runs = (over: Partial<DurableRuns> = {}): DurableRuns => ({
  stores: { redis: 'a private redis-server', postgres: 'the shared PostgreSQL' },
  providers: ['redis', 'postgres'],
  stateBytes: { rooms: 50, players: 57 },
  spots: 64,
  depth: 256,
  reps: 3,
  repMs: 1000,
  postgresPoolSize: 4,
  runs: [
    // Medians: none 60,000; redis 30,000 (0.50×: PASS); postgres 24,000 (0.40×: FAIL).
    ...[50_000, 60_000, 70_000].map((r, i) => pipelined('none', i + 1, r)),
    ...[30_000, 29_000, 31_000].map((r, i) => pipelined('redis', i + 1, r, r / 2)),
    ...[24_000, 20_000, 25_000].map((r, i) => pipelined('postgres', i + 1, r, r / 4)),
    sequential('none', 150),
    sequential('redis', 400),
    sequential('postgres', 900),
  ],
  postgresCounts: { statements: 200, tupUpdated: 12_000, writes: 11_998 },
  actorCount: 10_000,
  actorConcurrency: 64,
  actors: {
    none: { fill, restore: { ...fill, mismatched: 10_000 } },
    redis: { fill, restore: { ...fill, ms: 4000 } },
    postgres: { fill, restore: { ...fill, ms: 8000, failed: 2 } },
  },
  bytes: {
    redis: { memoryUsage: 375, usedMemoryPerRow: 360, sampled: 200 },
    postgres: { totalPerRow: 600, rowBytes: 220, rows: 10_256 },
  },
  stopMs: 4200,
  objectsAtStop: 31_000,
  ...over,
});

describe('bench: the durable objects part', () => {
  it('runs by default, and --only durable runs nothing else', () => {
    expect(parseOptions([]).durable).toBe(true);
    expect(parseOptions(['--scale']).durable).toBe(false);
    const only = parseOptions(['--only', 'durable']);
    expect(only).toMatchObject({ durable: true, systems: [], objects: false, sessions: false, scale: false });
    expect(parseOptions(['--only', 'durable,zlink'])).toMatchObject({ durable: true, systems: ['zlink'] });
  });

  it('compares each provider with the class without persist, and counts turns per write', () => {
    const section = summarizeDurable(runs());
    expect(section.figures.none.pipelinedReqPerSec).toBe(60_000);
    expect(section.ratios).toEqual({ redis: 0.5, postgres: 0.4 });
    expect(section.figures.redis).toMatchObject({
      writesPerSec: 15_000,
      turnsPerWrite: 2,
      sequentialP50Us: 400,
    });
    expect(section.figures.postgres).toMatchObject({ writesPerSec: 6000, turnsPerWrite: 4 });
    expect(section.figures.none.writesPerSec).toBeNaN();
    expect(section.redisCore).toEqual({ evalshaUs: 20, cpuUsPerWrite: 25 });
    expect(section.targets.map((t) => [t.value, t.result])).toEqual([
      [0.5, 'PASS'],
      [0.4, 'FAIL'],
    ]);
  });

  it('prints one column per store beside no persist, with the machine and each target', () => {
    const text = durableMarkdown(summarizeDurable(runs()), MACHINE).join('\n');
    expect(text).toContain('On test cpu, 2 cores, 4 GiB, Node v20, 2026-12-01');
    expect(text).toContain('| metric | no persist | Redis (AOF, everysec) | PostgreSQL | target |');
    expect(text).toContain('| pipelined ÷ no persist | – | 0.50× (PASS) | 0.40× (FAIL) | ≥ 0.5× |');
    expect(text).toContain('20.0 µs → 50,000');
    // 6,000 writes/s over a pool of 4.
    expect(text).toContain('| – | – | 1,500 |');
    expect(text).toContain('12,000 ÷ 200 = 60.0');
    expect(text).toContain('375 (MEMORY USAGE); 360 (used_memory)');
    expect(text).toContain('8.0 s (1,250/s, 2 failed)');
    // The class without persist restores nothing: its reads are not counted as wrong.
    expect(text).not.toContain('not as saved');
  });

  it('leaves out a store that did not run, and says why the part failed', () => {
    const redisOnly = runs({
      providers: ['redis'],
      runs: runs().runs.filter((r) => r.target !== 'postgres'),
      stores: { redis: 'a private redis-server', postgres: 'PostgreSQL not run: refused' },
    });
    const { postgresCounts: _, ...withoutCounts } = redisOnly;
    const text = durableMarkdown(summarizeDurable(withoutCounts), MACHINE).join('\n');
    expect(text).toContain('| metric | no persist | Redis (AOF, everysec) | target |');
    expect(text).toContain('PostgreSQL not run: refused');
    expect(durableMarkdown({ error: 'redis-server is not on PATH\nmore' }, MACHINE)).toEqual([
      '**Durable objects failed**: redis-server is not on PATH',
      '',
    ]);
  });
});
