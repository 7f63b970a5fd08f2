import type { SystemName } from './options.js';
import type { WorkloadName, WorkloadResult } from './workload/protocol.js';

/** The systems the bench compares, the runs each produced, and the names the report gives them. */

export const SYSTEM_LABELS: Record<SystemName, string> = {
  zlink: 'ZLink (Nest)',
  mesh: 'ZLink RouteMesh select-one',
  'mesh-node': 'ZLink RouteMesh Node direct',
  'mesh-node-curve': 'ZLink RouteMesh Node direct, CURVE',
  'zlink-curve': 'ZLink ClientServer, CURVE',
  raw: 'raw zmq, 1 record/send',
  'raw-batched': 'raw zmq, batched/turn',
  'raw-framed': 'raw zmq, batched/turn, payload framed',
  'nest-tcp': 'Nest TCP',
};

/** The key of a system in the report: its name, and `@<short rev>` for a `--baseline` build of it. */
export function systemKey(runs: Pick<SystemRuns, 'name' | 'baseline'>): string {
  return runs.baseline === undefined ? runs.name : `${runs.name}@${runs.baseline}`;
}

export function systemLabel(runs: Pick<SystemRuns, 'name' | 'baseline'>): string {
  const label = SYSTEM_LABELS[runs.name];
  return runs.baseline === undefined ? label : `${label} @${runs.baseline}`;
}

/** A run that did not finish (its processes were replaced for the next run). */
export interface RunFailure {
  readonly rep: number;
  readonly workload: WorkloadName;
  readonly error: string;
}

/** What one system produced: every repetition of every workload, failed runs, or why it could not start. */
export interface SystemRuns {
  readonly name: SystemName;
  /** The short revision of a `--baseline` build; absent for the current build. */
  readonly baseline?: string;
  readonly runs: Partial<Record<WorkloadName, WorkloadResult[]>>;
  readonly failures: RunFailure[];
  error?: string;
}
