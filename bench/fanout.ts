/**
 * Fanout rates (issue 6, item 6): ZLink classic fanout next to raw zeromq.js PUB→SUB, each as a publisher
 * process and a subscriber process. A round publishes for `ms` as fast as the publisher can (bursts
 * of 1000, yielding between them); the publish rate is what the publisher admitted per second, the
 * delivered rate what the subscriber handled per second of the round (counted after a short settle).
 */
import { join } from 'node:path';
import { BenchChild } from './children.js';
import { median } from './workload/stats.js';

export type FanoutSystem = 'zlink' | 'raw';

export interface FanoutRow {
  readonly system: FanoutSystem;
  readonly publishPerSecReps: number[];
  readonly deliveredPerSecReps: number[];
  readonly publishPerSec: number;
  readonly deliveredPerSec: number;
  /** Events the subscriber counted as dropped (ZLink only; raw cannot tell). */
  readonly dropped: number;
}

const TIMEOUT_MS = 60_000;
const SETTLE_MS = 300;

async function runSystem(
  dir: string,
  system: FanoutSystem,
  roundMs: number,
  reps: number,
): Promise<FanoutRow> {
  const script = join(dir, 'fanout-peer.js');
  const pub = new BenchChild(`fanout-pub-${system}`, script, { args: ['--role', 'pub', '--system', system] });
  let sub: BenchChild | undefined;
  try {
    const { endpoint } = await pub.next('ready', TIMEOUT_MS);
    sub = new BenchChild(`fanout-sub-${system}`, script, {
      args: ['--role', 'sub', '--system', system, '--endpoint', String(endpoint)],
    });
    await sub.next('ready', TIMEOUT_MS);
    const count = async (): Promise<{ count: number; dropped: number }> => {
      sub?.command({ type: 'count' });
      const m = await (sub as BenchChild).next('count', TIMEOUT_MS);
      return { count: m.count as number, dropped: m.dropped as number };
    };
    // Warm-up (raw PUB/SUB also needs its subscription to arrive): unmeasured.
    pub.command({ type: 'run', ms: Math.min(500, roundMs) });
    await pub.next('done', TIMEOUT_MS);
    const publishPerSecReps: number[] = [];
    const deliveredPerSecReps: number[] = [];
    let dropped = 0;
    for (let rep = 0; rep < reps; rep++) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const before = await count();
      pub.command({ type: 'run', ms: roundMs });
      const done = await pub.next('done', TIMEOUT_MS);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const after = await count();
      publishPerSecReps.push((done.published as number) / (roundMs / 1000));
      deliveredPerSecReps.push((after.count - before.count) / (roundMs / 1000));
      dropped = after.dropped;
    }
    return {
      system,
      publishPerSecReps,
      deliveredPerSecReps,
      publishPerSec: median(publishPerSecReps),
      deliveredPerSec: median(deliveredPerSecReps),
      dropped,
    };
  } finally {
    await Promise.all([pub.stop(5000), sub?.stop(5000)]);
  }
}

/** Runs both systems one after the other; `undefined` rows become an error entry. */
export async function runFanout(
  dir: string,
  roundMs: number,
  reps: number,
): Promise<FanoutRow[] | { error: string }> {
  try {
    return [await runSystem(dir, 'zlink', roundMs, reps), await runSystem(dir, 'raw', roundMs, reps)];
  } catch (error) {
    return { error: String((error as Error)?.message ?? error) };
  }
}
