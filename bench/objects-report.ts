/** The objects bench's runs (bench/objects.ts) as the report shows them: medians, store reads, the target. */
import type { WorkloadName, WorkloadResult } from './workload/protocol.js';
import { type Cell, METRICS, type Metric, type Target, cell, target } from './metrics.js';

export const OBJECT_TARGETS = ['channel', 'spot', 'miss'] as const;
export type ObjectTarget = (typeof OBJECT_TARGETS)[number];
/** The workloads the objects bench runs (one-way sends are left out). */
export const OBJECT_WORKLOADS: readonly WorkloadName[] = ['sequential', 'pipelined'];

export const OBJECT_TARGET_LABELS: Record<ObjectTarget, string> = {
  channel: 'ChannelName select-one',
  spot: 'Spot, route cached',
  miss: 'Spot, route not cached (routeCacheMaxAgeMs 0)',
};

export interface ObjectRun {
  readonly target: ObjectTarget;
  readonly workload: WorkloadName;
  readonly rep: number;
  readonly result: WorkloadResult;
  /** EVALSHA + EVAL + GET calls Redis counted during the run (the runtimes' lease refreshes included). */
  readonly storeReads: number;
}

export interface ObjectsRuns {
  /** Where the Location Store was: a private `redis-server`, or the one on the standard port. */
  readonly store: string;
  /** How many Spots the client calls in turn. */
  readonly spots: number;
  readonly runs: ObjectRun[];
}

export interface ObjectsSection extends ObjectsRuns {
  /** Target → metric key → median over the repetitions. */
  readonly medians: Record<ObjectTarget, Record<string, Cell>>;
  /** Target → workload → store reads per request, over all its repetitions. */
  readonly storeReadsPerRequest: Record<ObjectTarget, Partial<Record<WorkloadName, number>>>;
  /**
   * Target → workload → CPU per request of the client and the server process, µs, over all its
   * repetitions: where throughput goes when both processes wait on each other.
   */
  readonly cpuUsPerRequest: Record<
    ObjectTarget,
    Partial<Record<WorkloadName, { client: number; server: number }>>
  >;
  /** Workload → CPU per request (client + server), Spot (route cached) ÷ ChannelName. */
  readonly cpuRatios: Partial<Record<WorkloadName, number>>;
  /** Metric key → Spot (route cached) ÷ ChannelName. */
  readonly ratios: Record<string, number>;
  /** What a miss adds to a call: sequential p50 not cached − cached, in µs. */
  readonly missCostP50Us: number;
  /** What a miss costs in throughput: pipelined 1 / (not cached req/s) − 1 / (cached req/s), in µs. */
  readonly missCostPipelinedUs: number;
  readonly targets: Target[];
}

/** The socket systems' metrics of these workloads; CPU per call is shown split by process instead. */
export const OBJECT_METRICS: readonly Metric[] = METRICS.filter(
  (m) => OBJECT_WORKLOADS.includes(m.workload) && !m.key.endsWith('.cpuUs'),
);

const requestsOf = (r: WorkloadResult): number => (r.workload === 'oneway' ? r.sent : r.requests);

function byTarget<T>(make: (target: ObjectTarget) => T): Record<ObjectTarget, T> {
  return Object.fromEntries(OBJECT_TARGETS.map((t) => [t, make(t)])) as Record<ObjectTarget, T>;
}

/** Medians, store reads per request, Spot ÷ ChannelName, the cost of a miss and the targets. */
export function summarizeObjects(runs: ObjectsRuns): ObjectsSection {
  const of = (t: ObjectTarget, w: WorkloadName) =>
    runs.runs.filter((r) => r.target === t && r.workload === w);
  const medians = byTarget((t) => {
    const results: Partial<Record<WorkloadName, WorkloadResult[]>> = {};
    for (const w of OBJECT_WORKLOADS) results[w] = of(t, w).map((r) => r.result);
    const m: Record<string, Cell> = {};
    for (const metric of OBJECT_METRICS) {
      const c = cell(results, metric);
      if (c) m[metric.key] = c;
    }
    return m;
  });
  const storeReadsPerRequest = byTarget((t) => {
    const perRequest: Partial<Record<WorkloadName, number>> = {};
    for (const w of OBJECT_WORKLOADS) {
      const list = of(t, w);
      const requests = list.reduce((sum, r) => sum + requestsOf(r.result), 0);
      if (requests > 0) perRequest[w] = list.reduce((sum, r) => sum + r.storeReads, 0) / requests;
    }
    return perRequest;
  });
  const cpuUsPerRequest = byTarget((t) => {
    const perRequest: Partial<Record<WorkloadName, { client: number; server: number }>> = {};
    for (const w of OBJECT_WORKLOADS) {
      const list = of(t, w);
      if (list.length === 0 || list.some((r) => r.result.cost === undefined)) continue;
      const requests = list.reduce((sum, r) => sum + requestsOf(r.result), 0);
      // Weighted by each run's requests: the CPU of all runs over all their requests.
      const sum = (role: 'client' | 'server') =>
        list.reduce((s, r) => s + (r.result.cost?.[role].cpuUs ?? 0) * requestsOf(r.result), 0);
      if (requests > 0)
        perRequest[w] = { client: sum('client') / requests, server: sum('server') / requests };
    }
    return perRequest;
  });
  const median = (t: ObjectTarget, key: string): number => medians[t][key]?.median ?? Number.NaN;
  const ratios: Record<string, number> = {};
  for (const metric of OBJECT_METRICS) {
    const r = median('spot', metric.key) / median('channel', metric.key);
    if (Number.isFinite(r)) ratios[metric.key] = r;
  }
  const pipelined = (t: ObjectTarget) => 1e6 / median(t, 'pipelined.reqPerSec');
  const cpuRatios: Partial<Record<WorkloadName, number>> = {};
  for (const w of OBJECT_WORKLOADS) {
    const [spot, channel] = [cpuUsPerRequest.spot[w], cpuUsPerRequest.channel[w]];
    if (spot && channel) cpuRatios[w] = (spot.client + spot.server) / (channel.client + channel.server);
  }
  const pipelinedRatio = ratios['pipelined.reqPerSec'];
  return {
    ...runs,
    medians,
    storeReadsPerRequest,
    cpuUsPerRequest,
    cpuRatios,
    ratios,
    missCostP50Us: median('miss', 'sequential.p50Us') - median('spot', 'sequential.p50Us'),
    missCostPipelinedUs: pipelined('miss') - pipelined('spot'),
    targets: [
      target('pipelined req/s: Spot (route cached) ÷ ChannelName, same processes', pipelinedRatio, '≥', 0.9),
      target('pipelined CPU µs/request: Spot (route cached) ÷ ChannelName', cpuRatios.pipelined, '≤', 1.15),
    ],
  };
}
