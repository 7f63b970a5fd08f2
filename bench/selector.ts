/**
 * Selector cost per call, in-process (no sockets): `TargetSelector` at several candidate counts,
 * equal and skewed weights, with its prepared order (default bounds) and with the per-call
 * procedure (bounds 0, so the order search gives up at once). Run as a child of the runner; prints
 * `{type:'result', rows}`. Usage: node selector.js [--quick]
 */
import { type SelectorCandidate, TargetSelector } from '../lib/core/index.js';
import { emit, fail } from './workload/protocol.js';
import { median } from './workload/stats.js';

export interface SelectorRow {
  readonly n: number;
  readonly weights: 'equal' | 'skewed';
  readonly mode: 'precomputed' | 'per-call';
  /** What the selector reported after `update`. */
  readonly isPrecomputed: boolean;
  /** Time `update` took (the change path), ms. */
  readonly prepareMs: number;
  readonly picksPerRep: number;
  readonly reps: number;
  readonly nsPerPickReps: number[];
  readonly nsPerPick: number;
}

const SIZES = [2, 16, 128, 1024];
const REPS = 3;

function candidates(n: number, weights: SelectorRow['weights']): SelectorCandidate<number>[] {
  return Array.from({ length: n }, (_, i) => ({
    id: Buffer.from(`server-${String(i).padStart(5, '0')}`),
    weight: weights === 'equal' || i % 2 === 0 ? 100 : 300,
    target: i,
  }));
}

/** ns per pick over `picks` calls; the sum keeps the calls from being optimised away. */
function timePicks(selector: TargetSelector<number>, picks: number): number {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < picks; i++) sink += selector.pick() as number;
  const ns = Number(process.hrtime.bigint() - t0);
  if (sink < 0) throw new Error('unreachable');
  return ns / picks;
}

interface Config {
  readonly n: number;
  readonly weights: SelectorRow['weights'];
  readonly mode: SelectorRow['mode'];
  readonly selector: TargetSelector<number>;
  readonly prepareMs: number;
  readonly picks: number;
  readonly nsPerPickReps: number[];
}

function prepare(
  n: number,
  weights: SelectorRow['weights'],
  mode: SelectorRow['mode'],
  quick: boolean,
): Config {
  const selector = new TargetSelector<number>(
    mode === 'per-call' ? { maxSteps: 0, maxMillis: 0 } : undefined,
  );
  const t0 = process.hrtime.bigint();
  selector.update(candidates(n, weights));
  const prepareMs = Number(process.hrtime.bigint() - t0) / 1e6;
  // Per-call picks cost O(N): fewer of them, so N = 1024 stays within a few seconds.
  const picks = mode === 'precomputed' ? (quick ? 1_000_000 : 5_000_000) : quick ? 100_000 : 700_000;
  return { n, weights, mode, selector, prepareMs, picks, nsPerPickReps: [] };
}

try {
  const quick = process.argv.includes('--quick');
  const configs: Config[] = [];
  for (const mode of ['precomputed', 'per-call'] as const)
    for (const weights of ['equal', 'skewed'] as const)
      for (const n of SIZES) configs.push(prepare(n, weights, mode, quick));
  // Warm every path of `pick` first (both modes), so no configuration measures JIT tiering or a
  // deoptimisation caused by the next one; then interleave the repetitions.
  for (const c of configs) timePicks(c.selector, Math.ceil(c.picks / 5));
  for (let rep = 0; rep < REPS; rep++)
    for (const c of configs) c.nsPerPickReps.push(timePicks(c.selector, c.picks));
  const rows: SelectorRow[] = configs.map((c) => ({
    n: c.n,
    weights: c.weights,
    mode: c.mode,
    isPrecomputed: c.selector.isPrecomputed,
    prepareMs: c.prepareMs,
    picksPerRep: c.picks,
    reps: REPS,
    nsPerPickReps: c.nsPerPickReps,
    nsPerPick: median(c.nsPerPickReps),
  }));
  emit({ type: 'result', rows });
} catch (error) {
  fail(error);
}
