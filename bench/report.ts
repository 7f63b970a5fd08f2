import type { RelocationSection } from './relocation.js';
import type { ScaleSection } from './scale-report.js';
import type { SessionsSection } from './sessions.js';
import type { MulticastSection } from './multicast.js';
import type { CpuLoad } from './cpu-load.js';
import type { MachineInfo } from './machine.js';
import type { BenchOptions, SystemName } from './options.js';
import type { CallCost, OneWayResult, SequentialResult, WorkloadName, WorkloadResult } from './protocol.js';
import type { SelectorRow } from './selector.js';
import type { FanoutRow } from './fanout.js';
import type { ObjectsSection } from './objects-report.js';
import { median } from './stats.js';

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

/** `--baseline`: the revision the `@short` systems were built from, and how the current build compares. */
export interface BaselineSummary {
  /** As given on the command line. */
  readonly rev: string;
  readonly commit: string;
  readonly short: string;
  /** Metric key → system name → current median ÷ the baseline's median. */
  readonly ratios: Record<string, Partial<Record<SystemName, number>>>;
}

export interface BenchReport {
  readonly machine: MachineInfo;
  readonly settings: BenchOptions & { repMs: number; payloadBytes: { msgpack: number; json: number } };
  readonly systems: Record<
    string,
    {
      label: string;
      /** The short revision of a `--baseline` build. */
      baseline?: string;
      error?: string;
      failures: RunFailure[];
      runs: SystemRuns['runs'];
      medians: Record<string, Cell>;
    }
  >;
  /** Metric key → other system → ZLink ClientServer ÷ other (current build only). */
  readonly ratios: Record<string, Record<string, number>>;
  readonly selector: SelectorRow[] | { error: string } | undefined;
  readonly fanout: FanoutRow[] | { error: string } | undefined;
  /** Spots next to ChannelName on one pair of processes (bench/objects.ts); absent unless it ran. */
  readonly objects?: ObjectsSection | { error: string };
  /** Moves of a Spot under load (bench/relocation.ts); absent unless it ran. */
  relocation?: RelocationSection | { error: string };
  /** Sessions relayed against direct calls, one-way relay, memory per session (bench/sessions.ts). */
  sessions?: SessionsSection | { error: string };
  /** Logical Multicast delivery and publish cost per audience (bench/multicast.ts). */
  multicast?: MulticastSection | { error: string };
  /** Scale and memory figures (bench/scale.ts, `--scale`). */
  scale?: ScaleSection | { error: string };
  readonly targets: Target[];
  readonly oneWayLoss: Record<string, number>;
  wallTimeMs: number;
  cpuLoad?: CpuLoad;
  /** Only with `--baseline`. */
  readonly baseline?: BaselineSummary;
}

/** The median of `metric` over a system's repetitions; `undefined` when its workload did not run. */
export function cell(runs: SystemRuns['runs'], metric: Metric): Cell | undefined {
  const results = runs[metric.workload];
  if (!results || results.length === 0) return undefined;
  const reps = results.map(metric.pick);
  return { median: median(reps), reps };
}

export function buildReport(
  machine: MachineInfo,
  settings: BenchReport['settings'],
  systems: SystemRuns[],
  selector: BenchReport['selector'],
  fanout: BenchReport['fanout'] = undefined,
  baseline: Omit<BaselineSummary, 'ratios'> | undefined = undefined,
  objects: ObjectsSection | { error: string } | undefined = undefined,
): BenchReport {
  const medians = new Map<string, Record<string, Cell>>();
  for (const s of systems) {
    const m: Record<string, Cell> = {};
    for (const metric of METRICS) {
      const c = cell(s.runs, metric);
      if (c) m[metric.key] = c;
    }
    medians.set(systemKey(s), m);
  }
  const current = systems.filter((s) => s.baseline === undefined);
  const zlink = medians.get('zlink');
  const ratios: Record<string, Record<string, number>> = {};
  for (const metric of METRICS) {
    const z = zlink?.[metric.key]?.median;
    if (z === undefined) continue;
    for (const s of current) {
      const other = medians.get(s.name)?.[metric.key]?.median;
      if (s.name === 'zlink' || other === undefined) continue;
      (ratios[metric.key] ??= {})[s.name] = z / other;
    }
  }
  const oneWayLoss: Record<string, number> = {};
  for (const s of systems) {
    const runs = (s.runs.oneway ?? []) as OneWayResult[];
    if (runs.length > 0) oneWayLoss[systemKey(s)] = runs.reduce((sum, r) => sum + (r.sent - r.received), 0);
  }
  return {
    machine,
    settings,
    systems: Object.fromEntries(
      systems.map((s) => [
        systemKey(s),
        {
          label: systemLabel(s),
          ...(s.baseline === undefined ? {} : { baseline: s.baseline }),
          error: s.error,
          failures: s.failures,
          runs: s.runs,
          medians: medians.get(systemKey(s)) ?? {},
        },
      ]),
    ),
    ratios,
    selector,
    fanout,
    ...(objects === undefined ? {} : { objects }),
    targets: [
      ...targets(ratios, selector),
      ...stackTargets(medians),
      ...curveTargets(medians),
      fanoutTarget(fanout),
      ...(objects !== undefined && 'targets' in objects ? objects.targets : []),
    ],
    oneWayLoss,
    wallTimeMs: 0,
    ...(baseline === undefined
      ? {}
      : { baseline: { ...baseline, ratios: baselineRatios(systems, medians) } }),
  };
}

/** Current ÷ baseline for each system that ran in both builds, per metric both have. */
function baselineRatios(
  systems: readonly SystemRuns[],
  medians: ReadonlyMap<string, Record<string, Cell>>,
): BaselineSummary['ratios'] {
  const ratios: BaselineSummary['ratios'] = {};
  for (const base of systems.filter((s) => s.baseline !== undefined)) {
    for (const metric of METRICS) {
      const now = medians.get(base.name)?.[metric.key]?.median;
      const then = medians.get(systemKey(base))?.[metric.key]?.median;
      if (now !== undefined && then !== undefined) (ratios[metric.key] ??= {})[base.name] = now / then;
    }
  }
  return ratios;
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

function fanoutTarget(fanout: BenchReport['fanout']): Target {
  const rows = Array.isArray(fanout) ? fanout : [];
  const zlink = rows.find((r) => r.system === 'zlink')?.deliveredPerSec;
  const raw = rows.find((r) => r.system === 'raw')?.deliveredPerSec;
  return target(
    'fanout delivered/s: ZLink ÷ raw zeromq.js PUB→SUB',
    zlink !== undefined && raw ? zlink / raw : undefined,
    '≥',
    0.9,
  );
}

/**
 * The cost of encryption: RouteMesh Node direct and ClientServer with CURVE ÷ without, pipelined and
 * one-way (from their medians).
 */
function curveTargets(medians: ReadonlyMap<string, Record<string, Cell>>): Target[] {
  const pairs = [
    ['mesh-node', 'mesh-node-curve', 'RouteMesh Node direct'],
    ['zlink', 'zlink-curve', 'ClientServer'],
  ] as const;
  const keys = ['pipelined.reqPerSec', 'oneway.msgsPerSec'] as const;
  return pairs.flatMap(([plainName, curveName, label]) =>
    keys.map((key) => {
      const plain = medians.get(plainName)?.[key]?.median;
      const curve = medians.get(curveName)?.[key]?.median;
      const name = key === 'oneway.msgsPerSec' ? 'one-way msgs/s' : 'pipelined req/s';
      return target(
        `${name}: ${label} CURVE ÷ plain`,
        plain && curve !== undefined ? curve / plain : undefined,
        '≥',
        0.5,
        'the cost of CURVE (info)',
      );
    }),
  );
}

/**
 * The stack's limit: each ZLink system's pipelined and one-way rate against raw zeromq.js that
 * batches every turn by hand (no routing, no deadlines, no bookkeeping), same payload, same processes.
 */
function stackTargets(medians: ReadonlyMap<string, Record<string, Cell>>): Target[] {
  return [
    ...againstRaw(medians, 'raw-batched', 'raw batched/turn'),
    // The same against raw zeromq.js carrying the payload in ZLink's envelope: what is left once the
    // envelope, which the design requires, is paid on both sides.
    ...againstRaw(medians, 'raw-framed', 'raw batched/turn, payload framed', 'the same envelope (info)'),
  ];
}

function againstRaw(
  medians: ReadonlyMap<string, Record<string, Cell>>,
  rawName: SystemName,
  rawLabel: string,
  note?: string,
): Target[] {
  const systems = [
    ['zlink', 'ZLink ClientServer'],
    ['mesh-node', 'RouteMesh Node direct'],
    ['mesh', 'RouteMesh select-one'],
  ] as const;
  const raw = medians.get(rawName);
  return systems.flatMap(([name, label]) =>
    (['pipelined.reqPerSec', 'oneway.msgsPerSec'] as const).map((key) => {
      const ours = medians.get(name)?.[key]?.median;
      const theirs = raw?.[key]?.median;
      const metric = key === 'oneway.msgsPerSec' ? 'one-way msgs/s' : 'pipelined req/s';
      return target(
        `${metric}: ${label} ÷ ${rawLabel}`,
        ours !== undefined && theirs ? ours / theirs : undefined,
        '≥',
        0.9,
        note,
      );
    }),
  );
}

function targets(ratios: BenchReport['ratios'], selector: BenchReport['selector']): Target[] {
  const list = [
    target('pipelined req/s: ZLink ÷ Nest TCP', ratios['pipelined.reqPerSec']?.['nest-tcp'], '≥', 1.5),
    target('one-way msgs/s: ZLink ÷ raw 1 record/send', ratios['oneway.msgsPerSec']?.raw, '≥', 3),
    target('sequential p50: ZLink ÷ raw 1 record/send', ratios['sequential.p50Us']?.raw, '≤', 1.1),
    // The ratios are ZLink ClientServer ÷ other, so RouteMesh within 10% of it is a ratio ≤ 1/0.9.
    target(
      'pipelined req/s: ZLink ClientServer ÷ RouteMesh select-one',
      ratios['pipelined.reqPerSec']?.mesh,
      '≤',
      1.11,
      'RouteMesh within 10% of ClientServer',
    ),
  ];
  for (const weights of ['equal', 'skewed'] as const) {
    const rows = Array.isArray(selector) ? selector : [];
    const at = (n: number) =>
      rows.find((r) => r.mode === 'precomputed' && r.weights === weights && r.n === n);
    const big = at(1024);
    const small = at(2);
    const precomputed = big?.isPrecomputed === true && small?.isPrecomputed === true;
    const t = target(
      `selector ns/pick, precomputed, ${weights} weights: N=1024 ÷ N=2`,
      big && small ? big.nsPerPick / small.nsPerPick : undefined,
      '≤',
      1.5,
      big && small && !precomputed ? 'a selector was not precomputed' : undefined,
    );
    list.push(t.result === 'PASS' && !precomputed ? { ...t, result: 'FAIL' } : t);
  }
  return list;
}
