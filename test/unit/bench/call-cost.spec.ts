import { describe, expect, it } from '@jest/globals';
import { buildReport } from '../../../bench/report.js';
import { parseOptions } from '../../../bench/options.js';
import { startCost, stopCost } from '../../../bench/systems/call-cost.js';
import { MACHINE } from './fixtures.js';

describe('bench: the cost of a call', () => {
  it('counts the heap bytes allocated across collections, and the CPU spent', () => {
    const keep: number[][] = [];
    startCost();
    // 2,000 arrays of 1,000 doubles, 8 KB each: 16 MB, most of it collected on the way.
    for (let i = 0; i < 2000; i++) {
      keep.push(new Array<number>(1000).fill(i + 0.5));
      if (keep.length > 10) keep.length = 0;
    }
    const cost = stopCost();
    expect(cost.gcs).toBeGreaterThan(0);
    expect(cost.allocBytes).toBeGreaterThan(16e6);
    expect(cost.allocBytes).toBeLessThan(24e6);
    expect(cost.cpuUs).toBeGreaterThan(0);
    expect(() => stopCost()).toThrow('no cost count was started');
  });

  it('takes one profiler at a time', () => {
    expect(parseOptions(['--alloc-prof']).profile).toBe('alloc');
    expect(parseOptions(['--cpu-prof']).profile).toBe('cpu');
    expect('profile' in parseOptions([])).toBe(false);
    expect(() => parseOptions(['--cpu-prof', '--alloc-prof'])).toThrow('one at a time');
  });

  it('judges each ZLink system against raw zeromq.js batched per turn', () => {
    const settings = { ...parseOptions([]), repMs: 1000, payloadBytes: { msgpack: 100, json: 150 } };
    const pipelined = (reqPerSec: number) => ({
      workload: 'pipelined' as const,
      requests: reqPerSec,
      elapsedMs: 1000,
      reqPerSec,
    });
    const system = (name: 'zlink' | 'mesh-node' | 'raw-batched', reqPerSec: number) => ({
      name,
      runs: { pipelined: [pipelined(reqPerSec)] },
      failures: [],
    });
    const report = buildReport(
      MACHINE,
      settings,
      [system('zlink', 230), system('mesh-node', 200), system('raw-batched', 250)],
      undefined,
    );
    const of = (name: string) => report.targets.find((t) => t.name === name);
    expect(of('pipelined req/s: ZLink ClientServer ÷ raw batched/turn')).toMatchObject({
      value: 0.92,
      threshold: '≥ 0.9×',
      result: 'PASS',
    });
    expect(of('pipelined req/s: RouteMesh Node direct ÷ raw batched/turn')?.result).toBe('FAIL');
    expect(of('one-way msgs/s: ZLink ClientServer ÷ raw batched/turn')?.result).toBe('n/a');
  });
});
