import { describe, expect, it } from '@jest/globals';
import { renderMarkdown } from '../../../bench/markdown.js';
import { type ObjectRun, type ObjectTarget, summarizeObjects } from '../../../bench/objects-report.js';
import { parseOptions } from '../../../bench/options.js';
import { buildReport } from '../../../bench/report.js';
import { MACHINE } from './fixtures.js';

function sequential(target: ObjectTarget, rep: number, p50Us: number, storeReads: number): ObjectRun {
  const reqPerSec = 1e6 / p50Us;
  return {
    target,
    workload: 'sequential',
    rep,
    result: { workload: 'sequential', requests: 1000, elapsedMs: 1000, reqPerSec, p50Us, p99Us: 2 * p50Us },
    storeReads,
  };
}

/** A pipelined run whose processes spent `cpuUs` per request (client, server) and 100 + 50 heap bytes. */
function pipelined(
  target: ObjectTarget,
  rep: number,
  reqPerSec: number,
  storeReads: number,
  cpuUs: [number, number] = [5, 4],
): ObjectRun {
  const [client, server] = cpuUs;
  return {
    target,
    workload: 'pipelined',
    rep,
    result: {
      workload: 'pipelined',
      requests: 10000,
      elapsedMs: 1000,
      reqPerSec,
      cost: { client: { allocBytes: 100, cpuUs: client }, server: { allocBytes: 50, cpuUs: server } },
    },
    storeReads,
  };
}

const runs: ObjectRun[] = [
  sequential('channel', 1, 100, 0),
  sequential('channel', 2, 120, 0),
  sequential('spot', 1, 110, 1),
  sequential('spot', 2, 130, 0),
  sequential('miss', 1, 300, 1000),
  sequential('miss', 2, 340, 1002),
  pipelined('channel', 1, 50_000, 0),
  pipelined('spot', 1, 40_000, 2, [6, 4.35]),
  pipelined('miss', 1, 10_000, 10_000, [20, 5]),
];

describe('bench objects: summary', () => {
  const section = summarizeObjects({ store: 'private redis-server', spots: 256, runs });

  it('takes the median of each target and metric, and Spot ÷ ChannelName', () => {
    expect(section.medians.channel['sequential.p50Us']?.median).toBe(110);
    expect(section.medians.spot['sequential.p50Us']?.reps).toEqual([110, 130]);
    expect(section.ratios['pipelined.reqPerSec']).toBe(0.8);
    expect(section.ratios['sequential.p50Us']).toBeCloseTo(120 / 110);
  });

  it('counts store reads per request over all repetitions of a workload', () => {
    expect(section.storeReadsPerRequest.channel).toEqual({ sequential: 0, pipelined: 0 });
    expect(section.storeReadsPerRequest.spot.sequential).toBe(0.0005);
    expect(section.storeReadsPerRequest.miss.sequential).toBe(1.001);
    expect(section.storeReadsPerRequest.miss.pipelined).toBe(1);
  });

  it('prices a miss at p50 and in pipelined throughput', () => {
    expect(section.missCostP50Us).toBe(320 - 120);
    expect(section.missCostPipelinedUs).toBeCloseTo(100 - 25);
  });

  it('judges Spot ≥ 0.9× ChannelName pipelined, and its CPU per request ≤ 1.15×', () => {
    const [rate, cpu] = section.targets;
    expect(rate).toMatchObject({ value: 0.8, threshold: '≥ 0.9×', result: 'FAIL' });
    expect(cpu).toMatchObject({ threshold: '≤ 1.15×', result: 'PASS' });
    expect(cpu?.value).toBeCloseTo(10.35 / 9);
    expect(section.cpuUsPerRequest.miss.pipelined).toEqual({ client: 20, server: 5 });
    const costlier = summarizeObjects({
      store: 's',
      spots: 1,
      runs: [pipelined('channel', 1, 50_000, 0), pipelined('spot', 1, 45_000, 0, [6, 4.5])],
    });
    expect(costlier.targets.map((t) => t.result)).toEqual(['PASS', 'FAIL']);
    expect(costlier.missCostPipelinedUs).toBeNaN();
  });
});

describe('bench objects: options and report', () => {
  it('is a part of --only, on by default', () => {
    expect(parseOptions([]).objects).toBe(true);
    const only = parseOptions(['--only', 'objects']);
    expect(only).toMatchObject({ objects: true, systems: [], fanout: false, selector: false });
    expect(parseOptions(['--only', 'zlink']).objects).toBe(false);
  });

  const options = parseOptions(['--only', 'objects', '--reps', '2']);
  const settings = { ...options, repMs: 1000, payloadBytes: { msgpack: 100, json: 150 } };

  it('renders the objects table, the cost of a miss and the target', () => {
    const section = summarizeObjects({ store: 'private redis-server', spots: 256, runs });
    const markdown = renderMarkdown(
      buildReport(MACHINE, settings, [], undefined, undefined, undefined, section),
    );
    expect(markdown).toContain(
      '| metric | ChannelName select-one | Spot, route cached | Spot ÷ ChannelName | ' +
        'Spot, route not cached (routeCacheMaxAgeMs 0) |',
    );
    expect(markdown).toContain(
      '| sequential p50 µs (lower is better) | 110.0 ±9% | 120.0 ±8% | 1.09× | 320.0 ±6% |',
    );
    expect(markdown).toContain('| pipelined req/s (higher is better) | 50,000 (1 of 2 runs) |');
    expect(markdown).toContain(
      '| store reads per request, sequential (Redis INFO commandstats) | 0.000 | 0.001 |  | 1.001 |',
    );
    expect(markdown).toContain('The cost of a miss: +200.0 µs at sequential p50');
    expect(markdown).toContain(
      '| pipelined req/s: Spot (route cached) ÷ ChannelName, same processes | 0.800× | ≥ 0.9× | FAIL |',
    );
    expect(markdown).toContain(
      '| pipelined client heap bytes allocated/call (lower is better) | 100 (1 of 2 runs) | 100 (1 of 2 runs) | 1.00× |',
    );
    expect(markdown).not.toContain('CPU µs/call');
    expect(markdown).toContain(
      '| CPU µs per request, pipelined: client + server process (every thread, lower is better) | 5.0 + 4.0 | 6.0 + 4.4 | 1.15× | 20.0 + 5.0 |',
    );
    // No socket system ran: the first table is the objects one.
    expect(markdown.split('\n').find((line) => line.startsWith('| '))).toContain('ChannelName select-one');
  });

  it('names a failure instead of the table, and adds no target', () => {
    const report = buildReport(MACHINE, settings, [], undefined, undefined, undefined, {
      error: 'no redis\nmore',
    });
    const markdown = renderMarkdown(report);
    expect(markdown).toContain('**Objects failed**: no redis\n');
    expect(report.targets.some((t) => t.name.startsWith('pipelined req/s: Spot'))).toBe(false);
  });

  it('leaves the report as it was when objects did not run', () => {
    const report = buildReport(MACHINE, settings, [], undefined);
    expect('objects' in report).toBe(false);
    expect(renderMarkdown(report)).not.toContain('Objects');
  });
});
