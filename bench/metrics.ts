import type {
  CallCost,
  OneWayResult,
  SequentialResult,
  WorkloadName,
  WorkloadResult,
} from './workload/protocol.js';
import { median } from './workload/stats.js';
import type { SystemRuns } from './system-runs.js';

/** The figures the report takes from each run, their medians over repetitions, and the targets they meet. */

export interface Metric {
  readonly key: string;
  readonly label: string;
  readonly workload: WorkloadName;
  readonly pick: (r: WorkloadResult) => number;
  readonly better: 'higher' | 'lower';
  readonly digits: number;
}

const seq = (r: WorkloadResult): SequentialResult => r as SequentialResult;

export const METRICS: readonly Metric[] = [
  {
    key: 'sequential.reqPerSec',
    label: 'sequential req/s',
    workload: 'sequential',
    pick: (r) => seq(r).reqPerSec,
    better: 'higher',
    digits: 0,
  },
  {
    key: 'sequential.p50Us',
    label: 'sequential p50 µs',
    workload: 'sequential',
    pick: (r) => seq(r).p50Us,
    better: 'lower',
    digits: 1,
  },
  {
    key: 'sequential.p99Us',
    label: 'sequential p99 µs',
    workload: 'sequential',
    pick: (r) => seq(r).p99Us,
    better: 'lower',
    digits: 1,
  },
  {
    key: 'pipelined.reqPerSec',
    label: 'pipelined req/s',
    workload: 'pipelined',
    pick: (r) => (r.workload === 'pipelined' ? r.reqPerSec : Number.NaN),
    better: 'higher',
    digits: 0,
  },
  {
    key: 'oneway.msgsPerSec',
    label: 'one-way msgs/s',
    workload: 'oneway',
    pick: (r) => (r as OneWayResult).msgsPerSec,
    better: 'higher',
    digits: 0,
  },
  ...costMetrics('pipelined'),
  ...costMetrics('oneway'),
  {
    key: 'oneway.admittedPerSec',
    label: 'one-way sends admitted/s, client side (info)',
    workload: 'oneway',
    pick: (r) => (r as OneWayResult).sent / ((r as OneWayResult).sendPhaseMs / 1000),
    better: 'higher',
    digits: 0,
  },
];

/** Bytes allocated per call on each side and CPU µs per call of both, from the runs' `cost`. */
function costMetrics(workload: 'pipelined' | 'oneway'): Metric[] {
  const name = workload === 'oneway' ? 'one-way' : workload;
  const cost = (r: WorkloadResult): CallCost | undefined => r.cost;
  return [
    {
      key: `${workload}.clientAllocBytes`,
      label: `${name} client heap bytes allocated/call`,
      workload,
      pick: (r) => cost(r)?.client.allocBytes ?? Number.NaN,
      better: 'lower',
      digits: 0,
    },
    {
      key: `${workload}.serverAllocBytes`,
      label: `${name} server heap bytes allocated/call`,
      workload,
      pick: (r) => cost(r)?.server.allocBytes ?? Number.NaN,
      better: 'lower',
      digits: 0,
    },
    {
      key: `${workload}.cpuUs`,
      label: `${name} CPU µs/call, client + server`,
      workload,
      pick: (r) => {
        const c = cost(r);
        return c ? c.client.cpuUs + c.server.cpuUs : Number.NaN;
      },
      better: 'lower',
      digits: 2,
    },
  ];
}

export interface Cell {
  readonly median: number;
  readonly reps: number[];
}

export interface Target {
  readonly name: string;
  readonly value: number;
  readonly threshold: string;
  readonly result: 'PASS' | 'FAIL' | 'n/a';
  readonly note?: string;
}

/** The median of `metric` over a system's repetitions; `undefined` when its workload did not run. */
export function cell(runs: SystemRuns['runs'], metric: Metric): Cell | undefined {
  const results = runs[metric.workload];
  if (!results || results.length === 0) return undefined;
  const reps = results.map(metric.pick);
  return { median: median(reps), reps };
}

export function target(
  name: string,
  value: number | undefined,
  op: '≥' | '≤',
  limit: number,
  note?: string,
): Target {
  const threshold = `${op} ${limit}×`;
  if (value === undefined || !Number.isFinite(value))
    return { name, value: Number.NaN, threshold, result: 'n/a', note };
  const pass = op === '≥' ? value >= limit : value <= limit;
  return { name, value, threshold, result: pass ? 'PASS' : 'FAIL', note };
}
