/**
 * `npm run chaos` in its short CI mode (issue 9): 4 server and 2 client processes on RouteMesh and
 * ClientServer with 256 requests in flight per client, servers SIGKILLed (then started again as a
 * new generation) or SIGSTOPped every 2 s, Redis killed for 10 s mid-run — for 15 s; persistent
 * tallies (every turn saved in a State Store on a second Redis, never killed) taken over and restored
 * from it. The harness, compiled like the fixtures, checks the invariants itself; this test reads its
 * JSON line and asserts the same ones: every request ended exactly once, nothing ran twice, nothing
 * on a ready connection failed during the Redis outage unless its own server was faulted, and every
 * tally turn a client heard back from is in the tally's restored state, once, in order.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

function runChaos(seconds: number): Promise<{ code: number | null; out: string }> {
  const script = resolve(process.cwd(), '.fixtures-build/sample/chaos/chaos.js');
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script, '--duration', String(seconds)], {
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (out += chunk));
    // The harness bounds itself (the duration plus each phase's bound); this is the test's own bound,
    // with up to 45 s for bringing the tallies back (a dead owner's lease lapsing). SIGTERM lets the
    // harness stop what it started (its guards would kill them anyway).
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      fail(new Error(`the chaos run did not finish within 155 s; it printed:\n${out}`));
    }, 155000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

describe('npm run chaos (15 s, as CI runs it)', () => {
  it('every request ends exactly once, none runs twice, none on a ready connection fails during the Redis outage, no acknowledged tally turn is lost', async () => {
    const { code, out } = await runChaos(15);
    const line = out.split('\n').find((l) => l.startsWith('{"type":"chaos-result"'));
    if (!line) throw new Error(`no result line; the harness printed:\n${out}`);
    const report = JSON.parse(line) as {
      ok: boolean;
      invariants: Record<string, number>;
      started: number;
      terminals: Record<string, number>;
      faults: {
        kills: number;
        stops: number;
        redisOutage: { downAtS: number; upAtS: number | null } | null;
      };
      timeToTerminalMs: { p99: number; max: number };
      outage: { startedInWindow: number; failuresStartedInWindow: number; excusedByServerFault: number };
      requestTimeoutMs: number;
      byArrangement: Record<string, { started: number; terminals: Record<string, number> }>;
      relocations: { committed: number };
      tallies: { acked: number; activations: { created: number; restored: number }; restore: { ms: number } };
    };
    // The whole output when something is off; otherwise the figures, one line.
    if (!report.ok || code !== 0) console.log(out);
    else {
      const f = report.faults;
      process.stdout.write(
        `chaos 15 s: ${report.started} requests, ${JSON.stringify(report.terminals)}, p99 ${report.timeToTerminalMs.p99} ms / max ${report.timeToTerminalMs.max} ms, ${f.kills} kills, ${f.stops} stops, Redis down +${f.redisOutage?.downAtS}s…+${f.redisOutage?.upAtS}s, outage window: ${report.outage.startedInWindow} requests started, ${report.outage.failuresStartedInWindow} failed, ${report.outage.excusedByServerFault} of those on a faulted server; ${report.tallies.acked} tally turns acknowledged, ${report.tallies.activations.restored} tallies restored, all back in ${report.tallies.restore.ms} ms\n`,
      );
    }
    expect(report.invariants).toEqual({
      zeroTerminal: 0,
      multiTerminal: 0,
      duplicateExecutions: 0,
      outageFailures: 0,
      misroutedReplies: 0,
      repliesWithoutExecution: 0,
      relocationsUnended: 0,
      unexpectedExits: 0,
      tallyOpsLost: 0,
      tallyOpsTwice: 0,
      tallyOpsOutOfOrder: 0,
      talliesNotBack: 0,
    });
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
    // The run did what it says: traffic, server faults, and a Redis outage of about 10 s.
    expect(report.started).toBeGreaterThan(10000);
    expect(report.terminals.reply).toBeGreaterThan(10000);
    expect(report.faults.kills + report.faults.stops).toBeGreaterThan(0);
    // The rooms were called and moved all along.
    expect(report.byArrangement.objects?.terminals.reply).toBeGreaterThan(100);
    expect(report.relocations.committed).toBeGreaterThan(2);
    // The tallies took turns, and came back from the State Store (at least the Redis outage, which
    // empties the Location Store, makes the clients get-or-create them).
    expect(report.tallies.acked).toBeGreaterThan(100);
    expect(report.tallies.activations.restored).toBeGreaterThan(0);
    const outage = report.faults.redisOutage;
    expect(outage).not.toBeNull();
    expect((outage?.upAtS ?? 0) - (outage?.downAtS ?? 0)).toBeGreaterThanOrEqual(10);
    // No request outlived its deadline by more than a busy machine's timer lag.
    expect(report.timeToTerminalMs.max).toBeLessThan(report.requestTimeoutMs + 1000);
  }, 165000);
});
