import { isZLinkError } from '../errors.js';

/** Upper bounds (ms) of the latency buckets; one more bucket holds everything above. */
export const LATENCY_BUCKETS_MS: readonly number[] = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000,
];
/** The bucket bounds as the histograms search them. */
export const BOUNDS = Float64Array.from(LATENCY_BUCKETS_MS);

/**
 * How many messages one timed observation stands for. Reading the clock costs 50–90 ns here (about
 * 2% of a whole request round trip per read), so a random eighth of the successful messages are
 * timed and each counts eight times: bucket shares, sums and rates stay unbiased estimates, while
 * the exact counts come from the counters. Failures are always timed (they are rare) and count once.
 */
export const LATENCY_SAMPLE_WEIGHT = 8;

export class LatencyHistogram {
  /** Per bucket, not cumulative; the last one is above every bound. Weighted (see above). */
  readonly buckets = new Float64Array(BOUNDS.length + 1);
  count = 0;
  sumMs = 0;
  /** xorshift32 state: random, so that a periodic mix of slow and fast calls cannot alias. */
  private seed = (Math.random() * 0xffffffff) | 1;

  /** Whether to time this message (about one in `LATENCY_SAMPLE_WEIGHT`). */
  sample(): boolean {
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x;
    return (x & (LATENCY_SAMPLE_WEIGHT - 1)) === 0;
  }

  observe(ms: number, weight = 1): void {
    let i = 0;
    while (i < BOUNDS.length && ms > (BOUNDS[i] as number)) i++;
    this.buckets[i] = (this.buckets[i] as number) + weight;
    this.count += weight;
    this.sumMs += ms * weight;
  }
}

/** The caller side of one channel (or one mesh's Node direct namespace). */
export class CallMetrics {
  sends = 0;
  requests = 0;
  replies = 0;
  /** Requests that ended otherwise, per `ZLinkError` code (`Timeout`, `RemoteError`, ...). */
  readonly failures = new Map<string, number>();
  /**
   * Sends and requests that ended before they were queued, per code: no candidate (`NotFound`,
   * `Unavailable`), the source-local queue stayed full (`Timeout`), `Cancelled`, a lost route.
   */
  readonly refused = new Map<string, number>();

  refuse(error: unknown): void {
    const code = isZLinkError(error) ? error.code : 'Error';
    this.refused.set(code, (this.refused.get(code) ?? 0) + 1);
  }
  /** Time from submit to the terminal: sampled replies, every failure. */
  readonly latency = new LatencyHistogram();
}
