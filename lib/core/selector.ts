/**
 * ChannelName select-one: the smooth weighted round-robin of 02 §3.
 *
 * Each call: add every candidate's weight to its accumulator, pick the largest accumulator (ties go
 * to the candidate whose identifier bytes sort first, unsigned, a proper prefix first), subtract the
 * total weight from the winner. Accumulators live on the channel's send path; when the candidate
 * list changes, survivors keep theirs and the rest are dropped.
 *
 * The candidate list is prepared when peer state changes (`update`), never on the call path.
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

export class TargetSelector<T> {
  private targets: T[] = [];
  private weights: number[] = [];
  private keys: string[] = [];
  private acc: number[] = [];
  private total = 0;

  /** Number of selectable candidates. */
  get size(): number {
    return this.targets.length;
  }

  /**
   * Swaps in a new candidate list (any order; duplicates by id are a caller bug). Candidates whose
   * id was present before keep their accumulator; new ones start at 0.
   */
  update(candidates: readonly SelectorCandidate<T>[]): void {
    const previous = new Map<string, number>();
    for (let i = 0; i < this.keys.length; i++) previous.set(this.keys[i] as string, this.acc[i] as number);
    const sorted = [...candidates].sort((a, b) => compareIds(a.id, b.id));
    this.targets = sorted.map((c) => c.target);
    this.weights = sorted.map((c) => c.weight);
    this.keys = sorted.map((c) => idKey(c.id));
    this.acc = this.keys.map((k) => previous.get(k) ?? 0);
    // Sum of at most N × 10000 stays far inside 2^53, so a double is exact here (02 §3: ≥ 64-bit).
    this.total = this.weights.reduce((s, w) => s + w, 0);
  }

  /** One selection; `undefined` when there is no candidate. */
  pick(): T | undefined {
    const n = this.targets.length;
    if (n === 0) return undefined;
    const acc = this.acc;
    const weights = this.weights;
    let best = 0;
    let bestAcc = -Infinity;
    for (let i = 0; i < n; i++) {
      const a = (acc[i] as number) + (weights[i] as number);
      acc[i] = a;
      // Strictly greater: on a tie the earlier (smaller id) candidate stays the winner.
      if (a > bestAcc) {
        bestAcc = a;
        best = i;
      }
    }
    acc[best] = bestAcc - this.total;
    return this.targets[best];
  }

  /** Accumulator state, in id order (for tests and snapshots). */
  state(): { id: string; weight: number; accumulator: number }[] {
    return this.keys.map((k, i) => ({
      id: k,
      weight: this.weights[i] as number,
      accumulator: this.acc[i] as number,
    }));
  }
}
