import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { type SelectorCandidate, TargetSelector, compareIds } from '../../../../lib/core/index.js';
import { DEFAULT_ORDER_BOUNDS } from '../../../../lib/core/calls/selection-order.js';

/** Contract: select-one's smooth weighted round-robin and the orders it promises (docs/protocol.md#the-weighted-round-robin). */

const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);
const hex = (id: Uint8Array): string => Buffer.from(id).toString('hex');
/** `state()` reports ids as latin1 strings; turn them back into hex for comparisons. */
const stateHex = (id: string): string => Buffer.from(id, 'latin1').toString('hex');

function cand(target: string, id: Uint8Array, weight: number): SelectorCandidate<string> {
  return { id, weight, target };
}

function picks<T>(selector: TargetSelector<T>, n: number): (T | undefined)[] {
  return Array.from({ length: n }, () => selector.pick());
}

function accumulators(selector: TargetSelector<string>): Record<string, number> {
  return Object.fromEntries(selector.state().map((s) => [stateHex(s.id), s.accumulator]));
}

describe('TargetSelector (weighted round-robin)', () => {
  it('equal weights alternate: two candidates take turns', () => {
    const s = new TargetSelector<string>();
    s.update([cand('A', bytes(1), 100), cand('B', bytes(2), 100)]);
    expect(picks(s, 6)).toEqual(['A', 'B', 'A', 'B', 'A', 'B']);
  });

  it('equal weights alternate: three candidates rotate without repeats', () => {
    const s = new TargetSelector<string>();
    s.update([cand('C', bytes(3), 7), cand('A', bytes(1), 7), cand('B', bytes(2), 7)]);
    expect(picks(s, 9)).toEqual(['A', 'B', 'C', 'A', 'B', 'C', 'A', 'B', 'C']);
  });

  it('weights 100/300 → B, A, B, B (A has the smaller id)', () => {
    const s = new TargetSelector<string>();
    // Given in reverse order: the selector orders by id, not by arrival.
    s.update([cand('B', bytes(0x02), 300), cand('A', bytes(0x01), 100)]);
    expect(picks(s, 4)).toEqual(['B', 'A', 'B', 'B']);
    // After one period every accumulator is back at 0, so the period repeats.
    expect(accumulators(s)).toEqual({ '01': 0, '02': 0 });
    expect(picks(s, 4)).toEqual(['B', 'A', 'B', 'B']);
  });

  it('ties go to the smaller id: 100/300 with the heavier candidate first by id → B, B, A, B', () => {
    // Second pick is a 200/200 tie, which the smaller id (B) must win.
    const s = new TargetSelector<string>();
    s.update([cand('A', bytes(0x02), 100), cand('B', bytes(0x01), 300)]);
    expect(picks(s, 4)).toEqual(['B', 'B', 'A', 'B']);
  });

  it('the same candidate list and state give the same order (two selectors fed the same updates)', () => {
    const updates: SelectorCandidate<string>[][] = [
      [cand('A', bytes(1), 100), cand('B', bytes(2), 300), cand('C', bytes(3), 50)],
      [cand('B', bytes(2), 300), cand('C', bytes(3), 500), cand('D', bytes(0, 9), 200)],
      [cand('A', bytes(1), 10000), cand('D', bytes(0, 9), 200), cand('C', bytes(3), 500)],
    ];
    const run = (reverse: boolean): (string | undefined)[] => {
      const s = new TargetSelector<string>();
      const out: (string | undefined)[] = [];
      for (const u of updates) {
        s.update(reverse ? [...u].reverse() : u);
        out.push(...picks(s, 37));
      }
      return out;
    };
    const first = run(false);
    expect(run(false)).toEqual(first);
    // Input order of the candidate list does not matter either: only ids and weights do.
    expect(run(true)).toEqual(first);
    expect(new Set(first)).toEqual(new Set(['A', 'B', 'C', 'D']));
  });

  it('weights 100/300 converge to 1:3 within 1% over 40 000 picks', () => {
    const s = new TargetSelector<string>();
    s.update([cand('A', bytes(1), 100), cand('B', bytes(2), 300)]);
    let a = 0;
    let b = 0;
    for (let i = 0; i < 40_000; i++) {
      if (s.pick() === 'A') a++;
      else b++;
    }
    expect(a + b).toBe(40_000);
    expect(Math.abs(b / a - 3) / 3).toBeLessThan(0.01);
    // Smooth WRR is exact over whole periods.
    expect(a).toBe(10_000);
  });

  it('a candidate change keeps the survivors’ accumulators and drops the rest', () => {
    const s = new TargetSelector<string>();
    s.update([cand('A', bytes(1), 100), cand('B', bytes(2), 300), cand('C', bytes(3), 200)]);
    expect(picks(s, 2)).toEqual(['B', 'C']);
    // A: 100,200 → 200; B: 300-600=-300, then 0; C: 200,400-600=-200.
    expect(accumulators(s)).toEqual({ '01': 200, '02': 0, '03': -200 });

    // A leaves, C changes weight, D joins.
    s.update([cand('C', bytes(3), 50), cand('B', bytes(2), 300), cand('D', bytes(4), 100)]);
    expect(accumulators(s)).toEqual({ '02': 0, '03': -200, '04': 0 });
    expect(s.state().map((e) => e.weight)).toEqual([300, 50, 100]);

    // The next pick works from the kept state: B 300, C -150, D 100 → B.
    expect(s.pick()).toBe('B');
    expect(accumulators(s)).toEqual({ '02': -150, '03': -150, '04': 100 });

    // A rejoins and starts from 0, not from its old 200.
    s.update([
      cand('A', bytes(1), 100),
      cand('B', bytes(2), 300),
      cand('C', bytes(3), 50),
      cand('D', bytes(4), 100),
    ]);
    expect(accumulators(s)).toEqual({ '01': 0, '02': -150, '03': -150, '04': 100 });
  });

  it('id comparison is unsigned byte-wise with a proper prefix first', () => {
    const ordered = [
      bytes(),
      bytes(0x00),
      bytes(0x01),
      bytes(0x01, 0x00),
      bytes(0x01, 0xff),
      bytes(0x7f),
      bytes(0x80),
      bytes(0xff),
    ];
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        const c = compareIds(ordered[i] as Uint8Array, ordered[j] as Uint8Array);
        expect([i, j, Math.sign(c)]).toEqual([i, j, Math.sign(i - j)]);
      }
    }
    // Views into a larger buffer compare by their own bytes.
    const backing = bytes(0xff, 0x01, 0x00, 0xff);
    expect(compareIds(backing.subarray(1, 3), bytes(0x01, 0x00))).toBe(0);
  });

  it.each([
    ['[0x01] before [0x01,0x00] (prefix first)', bytes(0x01), bytes(0x01, 0x00)],
    ['[0x01,0x00] before [0x80]', bytes(0x01, 0x00), bytes(0x80)],
    ['[0x7F] before [0xFF] (unsigned)', bytes(0x7f), bytes(0xff)],
    ['[0x7F] before [0x80] (unsigned)', bytes(0x7f), bytes(0x80)],
  ])('ties go to the smaller id: %s', (_name, small, large) => {
    const s = new TargetSelector<string>();
    s.update([cand('large', large, 100), cand('small', small, 100)]);
    expect(picks(s, 4)).toEqual(['small', 'large', 'small', 'large']);
    expect(s.state().map((e) => stateHex(e.id))).toEqual([hex(small), hex(large)]);
  });

  it('zero candidates → undefined', () => {
    const s = new TargetSelector<string>();
    expect(s.size).toBe(0);
    expect(s.pick()).toBeUndefined();
    s.update([cand('A', bytes(1), 100)]);
    expect(s.pick()).toBe('A');
    s.update([]);
    expect(s.size).toBe(0);
    expect(s.pick()).toBeUndefined();
    expect(s.state()).toEqual([]);
  });
});

// --- property: TargetSelector ≡ the literal weighted round-robin procedure -------------------------------------

/** The procedure of docs/protocol.md#the-weighted-round-robin written out naively: a map of accumulators, full scan per pick. */
class NaiveSelector {
  private entries = new Map<string, { weight: number; target: string; acc: number }>();

  update(candidates: readonly SelectorCandidate<string>[]): void {
    const next = new Map<string, { weight: number; target: string; acc: number }>();
    for (const c of candidates) {
      // Survivors keep their accumulator; newcomers start at 0; the rest are dropped.
      next.set(hex(c.id), { weight: c.weight, target: c.target, acc: this.entries.get(hex(c.id))?.acc ?? 0 });
    }
    this.entries = next;
  }

  pick(): string | undefined {
    if (this.entries.size === 0) return undefined;
    let total = 0;
    for (const e of this.entries.values()) {
      e.acc += e.weight;
      total += e.weight;
    }
    // Lower-case hex strings compare exactly like unsigned bytes with a proper prefix first.
    let bestKey: string | undefined;
    for (const [key, e] of this.entries) {
      const best = bestKey === undefined ? undefined : this.entries.get(bestKey);
      if (best === undefined || e.acc > best.acc || (e.acc === best.acc && key < (bestKey as string)))
        bestKey = key;
    }
    const winner = this.entries.get(bestKey as string) as { target: string; acc: number };
    winner.acc -= total;
    return winner.target;
  }

  accumulators(): Record<string, number> {
    return Object.fromEntries([...this.entries].map(([k, e]) => [k, e.acc]));
  }
}

type Op =
  | { op: 'pick'; n: number }
  | { op: 'join'; slot: number; weight: number }
  | { op: 'leave'; slot: number }
  | { op: 'weight'; slot: number; weight: number };

// Three regimes: weights whose order is short enough to precompute, arbitrary weights with a small
// search bound (mostly the per-call fallback), and arbitrary weights with the default bounds.
const regimes = [
  {
    name: 'precomputed order (weights in steps of 100, up to 64 candidates)',
    weight: fc.integer({ min: 1, max: 12 }).map((w) => w * 100),
    bounds: undefined,
    maxMembers: 64,
    runs: 150,
  },
  {
    name: 'per-call fallback (any weight 1..10000, search bound 500 steps)',
    weight: fc.integer({ min: 1, max: 10_000 }),
    bounds: { maxSteps: 500, maxMillis: 50 },
    maxMembers: 16,
    runs: 200,
  },
  {
    name: 'default bounds (any weight 1..10000, up to 8 candidates)',
    weight: fc.integer({ min: 1, max: 10_000 }),
    bounds: undefined,
    maxMembers: 8,
    runs: 40,
  },
];

describe.each(regimes)('TargetSelector property: $name', ({ weight, bounds, maxMembers, runs }) => {
  it('matches the naive procedure under random joins, leaves, weight changes and picks', () => {
    // Bytes chosen so that prefixes and signed/unsigned disagreements are common.
    const idArb = fc
      .uint8Array({ minLength: 1, maxLength: 3 })
      .map((a) => a.map((b) => [0x00, 0x01, 0x7f, 0x80, 0xff][b % 5] as number));
    const weightArb = weight;
    const scenario = fc.record({
      pool: fc.uniqueArray(idArb, { minLength: 1, maxLength: maxMembers, selector: hex }),
      initial: fc.array(fc.tuple(fc.nat(), weightArb), { minLength: 1, maxLength: maxMembers }),
      ops: fc.array(
        fc.oneof(
          fc.record({ op: fc.constant('pick' as const), n: fc.integer({ min: 1, max: 40 }) }),
          fc.record({ op: fc.constant('join' as const), slot: fc.nat(), weight: weightArb }),
          fc.record({ op: fc.constant('leave' as const), slot: fc.nat() }),
          fc.record({ op: fc.constant('weight' as const), slot: fc.nat(), weight: weightArb }),
        ),
        { maxLength: 60 },
      ),
      rotate: fc.nat(),
    });

    fc.assert(
      fc.property(scenario, ({ pool, initial, ops, rotate }) => {
        const members = new Map<string, SelectorCandidate<string>>();
        const slotId = (slot: number): Uint8Array => pool[slot % pool.length] as Uint8Array;
        for (const [slot, weight] of initial) {
          const id = slotId(slot);
          members.set(hex(id), cand(hex(id), id, weight));
        }
        const real = new TargetSelector<string>(bounds);
        const naive = new NaiveSelector();
        let turn = rotate;
        const push = (): void => {
          // Present the list in a different order each time: order must not matter.
          const list = [...members.values()];
          const k = list.length === 0 ? 0 : turn++ % list.length;
          const shuffled = [...list.slice(k), ...list.slice(0, k)];
          real.update(shuffled);
          naive.update(shuffled);
          expect(real.size).toBe(members.size);
          expect(accumulators(real)).toEqual(naive.accumulators());
        };
        push();
        for (const o of ops as Op[]) {
          if (o.op === 'pick') {
            for (let i = 0; i < o.n; i++) expect(real.pick()).toBe(naive.pick());
            expect(accumulators(real)).toEqual(naive.accumulators());
            continue;
          }
          const id = slotId(o.slot);
          if (o.op === 'leave') members.delete(hex(id));
          else if (o.op === 'join' || members.has(hex(id))) members.set(hex(id), cand(hex(id), id, o.weight));
          push();
        }
      }),
      { numRuns: runs },
    );
  });
});

describe('TargetSelector preparation (prepared at change time, calls only read)', () => {
  const ids = (n: number): SelectorCandidate<number>[] =>
    Array.from({ length: n }, (_, i) => ({
      id: Uint8Array.of(i >> 8, i & 0xff),
      weight: i % 2 === 0 ? 100 : 300,
      target: i,
    }));

  it('picks never prepare: preparations change only on update', () => {
    const s = new TargetSelector<number>();
    s.update(ids(16));
    expect(s.preparations).toBe(1);
    for (let i = 0; i < 10_000; i++) s.pick();
    expect(s.preparations).toBe(1);
    s.update(ids(15));
    expect(s.preparations).toBe(2);
  });

  it('common weight sets are precomputed, including 1024 candidates', () => {
    // The step bound decides this; the time bound guards a loaded production process and would make
    // the test depend on how busy the machine is (a loaded CI core once took over 50 ms here).
    const s = new TargetSelector<number>({ ...DEFAULT_ORDER_BOUNDS, maxMillis: 60_000 });
    s.update(ids(2));
    expect(s.isPrecomputed).toBe(true);
    s.update(ids(1024));
    expect(s.isPrecomputed).toBe(true);
  });

  it('a search past its step bound falls back to the per-call procedure with identical results', () => {
    const weights = [9973, 7919, 6007, 5003, 101];
    const candidates = weights.map((w, i) => ({ id: Uint8Array.of(i), weight: w, target: i }));
    const bounded = new TargetSelector<number>({ maxSteps: 100, maxMillis: 50 });
    const unbounded = new TargetSelector<number>({ maxSteps: 1 << 24, maxMillis: 10_000 });
    bounded.update(candidates);
    unbounded.update(candidates);
    expect(bounded.isPrecomputed).toBe(false);
    expect(unbounded.isPrecomputed).toBe(true);
    for (let i = 0; i < 50_000; i++) expect(bounded.pick()).toBe(unbounded.pick());
  });

  it('a change mid-cycle continues from the current accumulators, not from zero', () => {
    const s = new TargetSelector<number>();
    const [a, b, c] = ids(3) as [
      SelectorCandidate<number>,
      SelectorCandidate<number>,
      SelectorCandidate<number>,
    ];
    s.update([a, b]);
    s.pick();
    s.pick();
    s.pick();
    const before = s.state();
    s.update([a, b, c]);
    const after = s.state();
    expect(after.slice(0, 2)).toEqual(before);
    expect(after[2]?.accumulator).toBe(0);
  });
});
