import { describe, expect, it } from '@jest/globals';
import { renderMarkdown } from '../../../bench/markdown.js';
import { type BenchOptions, parseOptions } from '../../../bench/options.js';
import type { PipelinedResult } from '../../../bench/workload/protocol.js';
import { type BenchReport, buildReport } from '../../../bench/report.js';
import type { SystemRuns } from '../../../bench/system-runs.js';
import { MACHINE } from './fixtures.js';

describe('bench --baseline: options', () => {
  it('is absent without the flag, so latest.json keeps its shape', () => {
    expect('baseline' in parseOptions([])).toBe(false);
  });

  it('takes a git revision, as the next argument or after =', () => {
    expect(parseOptions(['--baseline', 'HEAD~3']).baseline).toBe('HEAD~3');
    expect(parseOptions(['--baseline=main']).baseline).toBe('main');
  });

  it('combines with --only: the selected systems, each also run from the baseline', () => {
    const options = parseOptions(['--only', 'zlink', '--baseline', 'HEAD~3']);
    expect(options.systems).toEqual(['zlink']);
    expect(options.baseline).toBe('HEAD~3');
  });

  it('refuses a missing revision, one that git would read as an option, and nothing to compare', () => {
    expect(() => parseOptions(['--baseline'])).toThrow('--baseline needs a git revision');
    expect(() => parseOptions(['--baseline', '--quick'])).toThrow('--baseline needs a git revision');
    expect(() => parseOptions(['--only', 'raw,nest-tcp', '--baseline', 'HEAD'])).toThrow(
      '--only selects none of zlink, mesh, mesh-node',
    );
  });

  it('is in --help', () => {
    expect(() => parseOptions(['--help'])).toThrow('--baseline REV');
  });
});

function settings(options: BenchOptions): BenchReport['settings'] {
  return { ...options, repMs: 1000, payloadBytes: { msgpack: 100, json: 150 } };
}

/** A system that ran only the pipelined workload, once per rate given. */
function pipelined(name: SystemRuns['name'], rates: number[], baseline?: string): SystemRuns {
  const runs = rates.map((reqPerSec): PipelinedResult => ({
    workload: 'pipelined',
    requests: reqPerSec,
    elapsedMs: 1000,
    reqPerSec,
  }));
  return { name, ...(baseline === undefined ? {} : { baseline }), runs: { pipelined: runs }, failures: [] };
}

describe('bench --baseline: report', () => {
  const options = parseOptions([
    '--only',
    'zlink,mesh,raw',
    '--workloads',
    'pipelined',
    '--reps',
    '1',
    '--baseline',
    'HEAD~3',
  ]);
  const report = buildReport(
    MACHINE,
    settings(options),
    [
      pipelined('zlink', [300]),
      pipelined('zlink', [200], '1a2b3c4'),
      pipelined('mesh', [240]),
      pipelined('mesh', [300], '1a2b3c4'),
      pipelined('raw', [100]),
    ],
    undefined,
    undefined,
    { rev: 'HEAD~3', commit: '1a2b3c4d5e6f', short: '1a2b3c4' },
  );

  it('keys the baseline systems by name@rev and labels them with the rev', () => {
    expect(Object.keys(report.systems)).toEqual(['zlink', 'zlink@1a2b3c4', 'mesh', 'mesh@1a2b3c4', 'raw']);
    expect(report.systems['zlink@1a2b3c4']?.label).toBe('ZLink (Nest) @1a2b3c4');
    expect(report.systems['zlink@1a2b3c4']?.baseline).toBe('1a2b3c4');
  });

  it('gives current ÷ baseline per system, and leaves the baseline out of the ZLink ÷ other ratios', () => {
    expect(report.baseline?.ratios['pipelined.reqPerSec']).toEqual({ zlink: 1.5, mesh: 0.8 });
    expect(report.ratios['pipelined.reqPerSec']).toEqual({ mesh: 1.25, raw: 3 });
  });

  it('names the baseline in the header and shows its columns and ratios in the table', () => {
    const markdown = renderMarkdown(report);
    expect(markdown).toContain(
      '## nestjs-zlink bench — 2026-12-01T14:00:00.000Z — baseline HEAD~3 (1a2b3c4)',
    );
    const [header, , row] = markdown.split('\n').filter((line) => line.startsWith('| '));
    expect(header).toBe(
      '| metric | ZLink (Nest) | ZLink (Nest) @1a2b3c4 | ZLink RouteMesh select-one | ' +
        'ZLink RouteMesh select-one @1a2b3c4 | raw zmq, 1 record/send | ZLink ÷ ZLink RouteMesh select-one | ' +
        'ZLink ÷ raw zmq, 1 record/send | ZLink (Nest) ÷ @1a2b3c4 | ZLink RouteMesh select-one ÷ @1a2b3c4 |',
    );
    expect(row).toBe(
      '| pipelined req/s (higher is better) | 300 | 200 | 240 | 300 | 100 | 1.25× | 3.00× | 1.50× | 0.80× |',
    );
  });

  it('without a baseline: no baseline section and the table as before', () => {
    const plain = buildReport(
      MACHINE,
      settings(parseOptions(['--only', 'zlink,raw', '--workloads', 'pipelined', '--reps', '1'])),
      [pipelined('zlink', [300]), pipelined('raw', [100])],
      undefined,
    );
    expect('baseline' in plain).toBe(false);
    const markdown = renderMarkdown(plain);
    expect(markdown).toContain('## nestjs-zlink bench — 2026-12-01T14:00:00.000Z\n');
    expect(markdown).toContain(
      '| metric | ZLink (Nest) | raw zmq, 1 record/send | ZLink ÷ raw zmq, 1 record/send |\n' +
        '| --- | --- | --- | --- |\n' +
        '| pipelined req/s (higher is better) | 300 | 100 | 3.00× |',
    );
  });
});
