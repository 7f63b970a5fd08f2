/** The scale part's figures (bench/scale.ts) and their markdown. */
import type { MachineInfo } from './machine.js';

export interface ObjectMemory {
  readonly kind: 'spot' | 'actor';
  /** Idle activations held by the measured server when read. */
  readonly count: number;
  readonly heapPerObject: number;
  readonly rssPerObject: number;
  /** Redis `used_memory` growth per object (its authority record, lease-independent). */
  readonly redisPerObject: number;
  /** The creation rate of the step that made them (16 in flight). */
  readonly createsPerSec: number;
}

/** Creates or relocations at one number in flight, with Redis's own cost per operation. */
export interface RateRow {
  readonly concurrency: number;
  readonly done: number;
  readonly perSec: number;
  /** Relocations: aborted or failed moves; creates: always 0 (a failed create fails the part). */
  readonly failed: number;
  readonly redisCommandsPerOp: number;
  /** The same by command, per operation (`evalsha 8.0, get 4.0`). */
  readonly redisCommands: string;
  readonly redisCpuUsPerOp: number;
}

export interface MeshScale {
  readonly nodes: number;
  /** From spawning the first process until the last node saw every other node ready. */
  readonly spawnToAllReadyMs: number;
  /** From the last node's listener bound until the last node saw every other node ready. */
  readonly lastStartToAllReadyMs: number;
  /** Idle CPU per node over one window, % of one core. */
  readonly idleCpuPercentMedian: number;
  readonly idleCpuPercentMax: number;
  /** Sequential Node direct requests from the first node to the last. */
  readonly requestP50Us: number;
  readonly requestP99Us: number;
}

export interface ScaleSection {
  readonly store: string;
  readonly routeCache: {
    readonly entries: number;
    readonly heapPerEntry: number;
    readonly rssPerEntry: number;
  };
  readonly memory: readonly ObjectMemory[];
  readonly creates: readonly RateRow[];
  readonly relocations: readonly RateRow[];
  readonly mesh: MeshScale;
}

const n = (v: number): string => Math.round(v).toLocaleString('en-US');

export function scaleMarkdown(r: ScaleSection | { error: string }, machine: MachineInfo): string[] {
  if ('error' in r) return [`**Scale failed**: ${r.error.split('\n')[0]}`, ''];
  const perCore = (row: RateRow) => (row.redisCpuUsPerOp > 0 ? n(1e6 / row.redisCpuUsPerOp) : '—');
  const m = r.mesh;
  return [
    '### Scale and memory',
    '',
    `On ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, ${r.store}. ` +
      'Memory is read after two full collections; per object is the growth over the server before the ' +
      'objects were made, divided by their count. Redis figures are its own (`INFO commandstats`, `cpu`, `memory`).',
    '',
    '| idle objects on one server | heap / object | RSS / object | Redis memory / object | creates/s (16 in flight) |',
    '| --- | --- | --- | --- | --- |',
    ...r.memory.map(
      (o) =>
        `| ${n(o.count)} ${o.kind === 'spot' ? 'Spots' : 'Actors'} | ${n(o.heapPerObject)} B | ${n(o.rssPerObject)} B | ${n(o.redisPerObject)} B | ${n(o.createsPerSec)} |`,
    ),
    '',
    `Route cache: ${n(r.routeCache.entries)} entries, ${n(r.routeCache.heapPerEntry)} B of heap and ` +
      `${n(r.routeCache.rssPerEntry)} B of RSS each.`,
    '',
    '| against one Redis | in flight | per second | Redis commands / op | Redis CPU µs / op | ops/s one Redis core holds | aborted or failed |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...r.creates.map(
      (c) =>
        `| create | ${c.concurrency} | ${n(c.perSec)} | ${c.redisCommandsPerOp.toFixed(1)} | ${c.redisCpuUsPerOp.toFixed(0)} | ${perCore(c)} | ${c.failed} |`,
    ),
    ...r.relocations.map(
      (c) =>
        `| relocate | ${c.concurrency} | ${n(c.perSec)} | ${c.redisCommandsPerOp.toFixed(1)} | ${c.redisCpuUsPerOp.toFixed(0)} | ${perCore(c)} | ${c.failed} |`,
    ),
    '',
    `Redis commands per create: ${r.creates.at(-1)?.redisCommands ?? '—'}; per relocation: ` +
      `${r.relocations.at(-1)?.redisCommands ?? '—'} (Redis counts the commands its scripts run too). ` +
      'Beside the operations themselves they hold the ' +
      "processes' own background traffic over the same window (lease refreshes, discovery reads), " +
      'which a slower step counts more of.',
    '',
    `Mesh: ${m.nodes} MeshNode processes with discovery through the Location Store. Every node saw every ` +
      `other ready ${n(m.spawnToAllReadyMs)} ms after the first process was spawned, ${n(m.lastStartToAllReadyMs)} ms after ` +
      `the last one's listener was bound. Idle CPU per node: median ${m.idleCpuPercentMedian.toFixed(2)} %, ` +
      `max ${m.idleCpuPercentMax.toFixed(2)} % of one core. A Node direct request from the first node to the ` +
      `last: p50 ${n(m.requestP50Us)} µs, p99 ${n(m.requestP99Us)} µs.`,
    '',
  ];
}
