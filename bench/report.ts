import type { RelocationSection } from './relocation.js';
import type { ScaleSection } from './scale-report.js';
import type { SessionsSection } from './sessions.js';
import type { MulticastSection } from './multicast.js';
import type { DurableSection } from './durable-report.js';
import type { CpuLoad } from './cpu-load.js';
import type { MachineInfo } from './machine.js';
import type { BenchOptions, SystemName } from './options.js';
import type { OneWayResult } from './workload/protocol.js';
import type { SelectorRow } from './selector.js';
import type { FanoutRow } from './fanout.js';
import type { ObjectsSection } from './objects-report.js';
import { type Cell, METRICS, type Target, cell, target } from './metrics.js';
import { type RunFailure, type SystemRuns, systemKey, systemLabel } from './system-runs.js';

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
  /** Durable objects: persistence's cost per call, writes, bytes per object, restore (bench/durable.ts). */
  durable?: DurableSection | { error: string };
  /** Scale and memory figures (bench/scale.ts, `--scale`). */
  scale?: ScaleSection | { error: string };
  readonly targets: Target[];
  readonly oneWayLoss: Record<string, number>;
  wallTimeMs: number;
  cpuLoad?: CpuLoad;
  /** Only with `--baseline`. */
  readonly baseline?: BaselineSummary;
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
