/** Small statistics helpers shared by the client processes and the report. */

/** The `q` quantile (0..1) of `sorted` (ascending), nearest rank. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1
    ? (finite[mid] as number)
    : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
}

/** The fastest and the middle of a set of per-call figures (the in-process instruments' outputs). */
export function minAndMedian(values: readonly number[]): { min: number; median: number } {
  return { min: Math.min(...values), median: median(values) };
}
