import { describe, expect, it } from '@jest/globals';
import { parseOptions } from '../../../bench/options.js';
import { type RedisCounters, commandsPerOp, redisDelta } from '../../../bench/redis-info.js';
import { type ScaleSection, scaleMarkdown } from '../../../bench/scale-report.js';
import { MACHINE } from './fixtures.js';

const counters = (byCommand: Record<string, number>, cpuUs: number, usedMemory: number): RedisCounters => ({
  commands: Object.values(byCommand).reduce((a, b) => a + b, 0),
  byCommand,
  cpuUs,
  usedMemory,
});

describe('bench: the scale part', () => {
  it('runs only with --scale or --only scale, and --scale runs nothing else', () => {
    expect(parseOptions([]).scale).toBe(false);
    const scale = parseOptions(['--scale']);
    expect(scale.scale).toBe(true);
    expect(scale.systems).toEqual([]);
    expect([scale.objects, scale.fanout, scale.selector, scale.multicast]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(parseOptions(['--only', 'zlink,scale'])).toMatchObject({ scale: true, systems: ['zlink'] });
  });

  it("reads Redis's counts per operation, leaving out background traffic", () => {
    const before = counters({ evalsha: 10, hmget: 5, ping: 7 }, 1000, 5000);
    const after = counters({ evalsha: 40, hmget: 35, time: 30, ping: 8 }, 4000, 8000);
    const delta = redisDelta(before, after);
    expect(delta).toEqual({
      commands: 91,
      byCommand: { evalsha: 30, hmget: 30, time: 30, ping: 1 },
      cpuUs: 3000,
      usedMemory: 3000,
    });
    // 10 operations: ping ran 0.1 per operation (kept), a command below 0.05 would be left out.
    expect(commandsPerOp(delta, 10)).toBe('evalsha 3.0, hmget 3.0, time 3.0, ping 0.1');
    expect(commandsPerOp(delta, 100)).toBe('evalsha 0.3, hmget 0.3, time 0.3');
    expect(commandsPerOp(delta, 0)).toBe('');
  });

  it('prints each figure with the machine it was measured on', () => {
    const row = {
      concurrency: 16,
      done: 3000,
      perSec: 4000,
      failed: 0,
      redisCommandsPerOp: 16,
      redisCommands: 'evalsha 3.0',
      redisCpuUsPerOp: 50,
    };
    const section: ScaleSection = {
      store: 'private redis-server',
      routeCache: { entries: 1_000_000, heapPerEntry: 777.4, rssPerEntry: 1200 },
      memory: [
        {
          kind: 'spot',
          count: 100_000,
          heapPerObject: 3300,
          rssPerObject: 4800,
          redisPerObject: 750,
          createsPerSec: 4700,
        },
      ],
      creates: [row],
      relocations: [{ ...row, concurrency: 1, perSec: 350, failed: 2 }],
      mesh: {
        nodes: 16,
        spawnToAllReadyMs: 5000,
        lastStartToAllReadyMs: 40,
        idleCpuPercentMedian: 0.5,
        idleCpuPercentMax: 0.8,
        requestP50Us: 210,
        requestP99Us: 900,
      },
    };
    const text = scaleMarkdown(section, MACHINE).join('\n');
    expect(text).toContain(`${MACHINE.cpuModel}, ${MACHINE.cores} cores`);
    expect(text).toContain('| 100,000 Spots | 3,300 B | 4,800 B | 750 B | 4,700 |');
    expect(text).toContain('1,000,000 entries, 777 B of heap');
    // One Redis core: 1 s of CPU ÷ 50 µs per create.
    expect(text).toContain('| create | 16 | 4,000 | 16.0 | 50 | 20,000 | 0 |');
    expect(text).toContain('| relocate | 1 | 350 | 16.0 | 50 | 20,000 | 2 |');
    expect(text).toContain('16 MeshNode processes');
    expect(scaleMarkdown({ error: 'no redis-server\nstack' }, MACHINE)).toEqual([
      '**Scale failed**: no redis-server',
      '',
    ]);
  });
});
