/**
 * README's third command (`npm run demo`) keeps working: the demo, compiled like the fixtures, runs
 * every process it starts, prints its summary and exits 0 having stopped them all (issue 8 §4).
 * Selection is deterministic (smooth weighted round-robin), so the counts are exact.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

function runDemo(): Promise<{ code: number | null; out: string }> {
  const script = resolve(process.cwd(), '.fixtures-build/sample/billing/demo.js');
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script], { env: { ...process.env, NODE_OPTIONS: '' } });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.stderr.resume();
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`the demo did not finish within 60 s; it printed:\n${out}`));
    }, 60000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

describe('npm run demo', () => {
  it('shows ClientServer weights and drain, RouteMesh Node direct, select-one and a runtime weight change, fanout with a fast and a slow subscriber, then stops everything', async () => {
    const { code, out } = await runDemo();
    expect(code).toBe(0);
    // The counts a summary line prints after `label`, as an object (key order follows arrival).
    const counts = (label: string): unknown => {
      const line = out.split('\n').find((l) => l.includes(label));
      const json = line?.slice(line.indexOf(label) + label.length).match(/\{[^}]*\}/)?.[0];
      return json === undefined ? `no line with ${label}` : JSON.parse(json);
    };
    expect(counts('4000 requests in')).toEqual({ 'billing-a': 1000, 'billing-b': 3000 });
    expect(counts('client still configured with both:')).toEqual({ 'billing-a': 1000 });
    expect(out).toContain('failures {}');
    expect(counts('300 Node direct requests to play-c:')).toEqual({ 'play-c': 300 });
    expect(counts("1000 'match' requests, weights 100/100:")).toEqual({ 'play-b': 500, 'play-c': 500 });
    expect(counts('play-b set to weight 0 at run time; 500 more:')).toEqual({ 'play-c': 500 });
    expect(counts('play-b back to 100; 500 more:')).toEqual({ 'play-b': 250, 'play-c': 250 });
    const fanout = /fast subscriber: delivered (\d+) of (\d+), dropped (\d+)/.exec(out);
    expect(fanout?.[1]).toBe(fanout?.[2]);
    expect(fanout?.[3]).toBe('0');
    const slow = /slow subscriber: delivered (\d+), dropped (\d+)/.exec(out);
    expect(Number(slow?.[2])).toBeGreaterThan(0);
    expect(Number(slow?.[1]) + Number(slow?.[2])).toBe(Number(fanout?.[2]));
    expect(out).toContain('demo finished; every process it started has stopped');
  }, 70000);
});
