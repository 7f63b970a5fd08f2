import { Buffer } from 'node:buffer';
import {
  DEFAULT_ORDER_BOUNDS,
  type OrderBounds,
  computeSelectionOrder,
  stepOnce,
} from './selection-order.js';

/**
 * ChannelName select-one: the smooth weighted round-robin of docs/protocol.md#the-weighted-round-robin.
 *
 * The procedure: add every candidate's weight to its accumulator, pick the largest accumulator
 * (ties go to the candidate whose identifier bytes sort first, unsigned, a proper prefix first),
 * subtract the total weight from the winner. Accumulators live on the channel's send path; when the
 * candidate list changes, survivors keep theirs and the rest are dropped.
 *
 * Everything is prepared on `update` (the change path): the sorted candidates and the order of picks
 * from the current accumulator state (see `selection-order.ts`). `pick` then reads one array slot
 * and advances a cursor — O(1), no allocation. When the order search hits its bounds, `pick` runs
 * the procedure itself (O(N)); the results are identical either way.
 */
export interface SelectorCandidate<T> {
  /** NodeRid (RouteMesh) or Server RID (ClientServer) bytes. */
  readonly id: Uint8Array;
  /** 1..10000; weight-0 and draining targets are filtered out before they get here. */
  readonly weight: number;
  readonly target: T;
}

/** Unsigned byte-wise compare from the front; a proper prefix sorts first. */
export function compareIds(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

function idKey(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('latin1');
}

const EMPTY = new Float64Array(0);

export class TargetSelector<T> {
  private targets: T[] = [];
  private keys: string[] = [];
  private weights: Float64Array = EMPTY;
  private total = 0;
  /** Accumulators when the order was prepared (precomputed mode) or live (per-call mode). */
  private acc: Float64Array = EMPTY;
  private order: Uint32Array | undefined;
  private loopStart = 0;
  private cursor = 0;
  /** How many times a candidate change prepared a new order; calls never add to it. */
  preparations = 0;

  constructor(private readonly bounds: OrderBounds = DEFAULT_ORDER_BOUNDS) {}

  /** Number of selectable candidates. */
  get size(): number {
    return this.targets.length;
  }

  /** `true` when calls read a prepared order; `false` when the search hit a bound (per-call mode). */
  get isPrecomputed(): boolean {
    return this.order !== undefined;
  }

  /**
   * Swaps in a new candidate list (any order; duplicates by id are a caller bug). Candidates whose
   * id was present before keep their current accumulator; new ones start at 0.
   */
  update(candidates: readonly SelectorCandidate<T>[]): void {
    const current = this.currentAccumulators();
    const previous = new Map<string, number>();
    for (let i = 0; i < this.keys.length; i++) previous.set(this.keys[i] as string, current[i] as number);
    const sorted = [...candidates].sort((a, b) => compareIds(a.id, b.id));
    this.targets = sorted.map((c) => c.target);
    this.keys = sorted.map((c) => idKey(c.id));
    this.weights = Float64Array.from(sorted, (c) => c.weight);
    this.acc = Float64Array.from(this.keys, (k) => previous.get(k) ?? 0);
    // Sum of at most N × 10000 stays far inside 2^53, so a double is exact here.
    this.total = this.weights.reduce((s, w) => s + w, 0);
    const prepared = computeSelectionOrder(this.acc, this.weights, this.bounds);
    this.order = prepared?.order;
    this.loopStart = prepared?.loopStart ?? 0;
    this.cursor = 0;
    this.preparations++;
  }

  /** One selection; `undefined` when there is no candidate. */
  pick(): T | undefined {
    const order = this.order;
    if (order !== undefined) {
      const c = this.cursor;
      this.cursor = c + 1 === order.length ? this.loopStart : c + 1;
      return this.targets[order[c] as number];
    }
    if (this.targets.length === 0) return undefined;
    return this.targets[stepOnce(this.acc, this.weights, this.total)];
  }

  /** Accumulator state, in id order (for tests and snapshots). */
  state(): { id: string; weight: number; accumulator: number }[] {
    const current = this.currentAccumulators();
    return this.keys.map((k, i) => ({
      id: k,
      weight: this.weights[i] as number,
      accumulator: current[i] as number,
    }));
  }

  /**
   * The accumulators as the per-call procedure would hold them now (replays the cursor; change path only).
   */
  private currentAccumulators(): Float64Array {
    if (this.order === undefined) return this.acc;
    const acc = Float64Array.from(this.acc);
    for (let i = 0; i < this.cursor; i++) stepOnce(acc, this.weights, this.total);
    return acc;
  }
}
