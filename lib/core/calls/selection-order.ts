/**
 * The precomputed selection order: prepared when the candidates change, read by every call
 * (docs/protocol.md#the-order-prepared-when-candidates-change).
 *
 * The weighted round-robin step is deterministic, so from a given accumulator state the picks are
 * eventually periodic. On a candidate change we run the procedure ahead from the *current* state and
 * find where a state repeats (Brent's cycle detection: O(1) saved states, no table of states); the
 * picks before the repetition are a one-time prefix, the rest a cycle. Calls then read one array and
 * advance a cursor. The conditions it keeps:
 * - the cycle is never assumed to be (sum of weights ÷ gcd) long from the all-zero state: survivors keep
 *   their accumulators, so the start is arbitrary and is found by detection, not formula;
 * - we never wait for the start state to recur (after a prefix it may never come back);
 * - the search is bounded by steps and by time; past either bound the caller falls back to the per-call
 *   procedure. The search runs on the change path only.
 */

/** One step of the procedure on `acc` (mutated); returns the winner's index. Ties: the lower index. */
export function stepOnce(acc: Float64Array, weights: Float64Array, total: number): number {
  const n = acc.length;
  let best = 0;
  let bestAcc = -Infinity;
  for (let i = 0; i < n; i++) {
    const a = (acc[i] as number) + (weights[i] as number);
    acc[i] = a;
    if (a > bestAcc) {
      bestAcc = a;
      best = i;
    }
  }
  acc[best] = bestAcc - total;
  return best;
}

function sameState(a: Float64Array, b: Float64Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export interface SelectionOrder {
  /** Winner indexes: `order[0..loopStart)` once, then `order[loopStart..]` repeating. */
  readonly order: Uint32Array;
  readonly loopStart: number;
}

export interface OrderBounds {
  /** Procedure steps the whole search may take. */
  readonly maxSteps: number;
  /** Wall time the whole search may take. */
  readonly maxMillis: number;
}

export const DEFAULT_ORDER_BOUNDS: OrderBounds = { maxSteps: 1 << 20, maxMillis: 50 };

/**
 * Finds prefix and cycle from `start` (not mutated). `undefined` when a bound is hit: the caller
 * then runs the procedure per call.
 */
export function computeSelectionOrder(
  start: Float64Array,
  weights: Float64Array,
  bounds: OrderBounds = DEFAULT_ORDER_BOUNDS,
): SelectionOrder | undefined {
  const n = start.length;
  if (n === 0) return undefined;
  let total = 0;
  for (let i = 0; i < n; i++) total += weights[i] as number;
  const deadline = performance.now() + bounds.maxMillis;
  let budget = bounds.maxSteps;
  // Reading the clock costs more than a small step, so look at it once per ~64k element updates.
  const checkEvery = Math.max(1, Math.floor(65536 / n));
  let sinceCheck = 0;
  const overBudget = (steps: number): boolean => {
    budget -= steps;
    if (budget < 0) return true;
    sinceCheck += steps;
    if (sinceCheck < checkEvery) return false;
    sinceCheck = 0;
    return performance.now() > deadline;
  };

  // Brent: find the cycle length λ.
  const saved = Float64Array.from(start);
  const hare = Float64Array.from(start);
  stepOnce(hare, weights, total);
  let power = 1;
  let lambda = 1;
  while (!sameState(saved, hare)) {
    if (power === lambda) {
      saved.set(hare);
      power *= 2;
      lambda = 0;
    }
    stepOnce(hare, weights, total);
    lambda++;
    if (overBudget(1)) return undefined;
  }

  // μ: move a second pointer λ ahead, then both until they meet.
  const tortoise = Float64Array.from(start);
  hare.set(start);
  for (let i = 0; i < lambda; i++) stepOnce(hare, weights, total);
  if (overBudget(lambda)) return undefined;
  let mu = 0;
  while (!sameState(tortoise, hare)) {
    stepOnce(tortoise, weights, total);
    stepOnce(hare, weights, total);
    mu++;
    if (overBudget(2)) return undefined;
  }

  // Record the picks of prefix + one cycle.
  if (overBudget(mu + lambda)) return undefined;
  const order = new Uint32Array(mu + lambda);
  const acc = Float64Array.from(start);
  for (let i = 0; i < order.length; i++) order[i] = stepOnce(acc, weights, total);
  return { order, loopStart: mu };
}
