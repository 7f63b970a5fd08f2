import { describe, expect, it } from '@jest/globals';
import { renderMarkdown } from '../../../bench/markdown.js';
import { parseOptions } from '../../../bench/options.js';
import { buildReport } from '../../../bench/report.js';
import { sequential } from '../../../bench/workload/workloads.js';
import { MACHINE } from './fixtures.js';

/** A target whose request answers at once: what a run does is then its own pacing. */
const instant = {
  request: () => Promise.resolve(null),
  send: () => undefined,
  count: () => Promise.resolve(0),
};

describe('bench --idle-ms: the sequential workload with the processes left idle between requests', () => {
  it('is 0 (back to back) without the flag, and takes a positive number of ms', () => {
    expect(parseOptions([]).idleMs).toBe(0);
    expect(parseOptions(['--idle-ms', '1']).idleMs).toBe(1);
    expect(parseOptions(['--idle-ms=2.5']).idleMs).toBe(2.5);
    expect(() => parseOptions(['--idle-ms', '0'])).toThrow('--idle-ms needs a positive number');
    expect(() => parseOptions(['--help'])).toThrow('--idle-ms N');
  });

  it('sleeps that long before each request', async () => {
    // A timer never fires early, so 60 ms of 10 ms sleeps hold at most 7 requests, where back to back the
    // same 60 ms hold thousands (not asserted: a starved machine may run fewer).
    const idle = await sequential(instant, 60, 10);
    expect(idle.requests).toBeGreaterThanOrEqual(1);
    expect(idle.requests).toBeLessThanOrEqual(7);
  });

  it('says so in the report', () => {
    const render = (argv: string[]) => {
      const options = parseOptions([...argv, '--only', 'raw', '--workloads', 'sequential']);
      const settings = { ...options, repMs: 1000, payloadBytes: { msgpack: 100, json: 150 } };
      return renderMarkdown(buildReport(MACHINE, settings, [], undefined, undefined, undefined));
    };
    expect(render(['--idle-ms', '1'])).toContain('Sequential sleeps 1 ms before each request (--idle-ms)');
    expect(render([])).not.toContain('--idle-ms');
  });
});
