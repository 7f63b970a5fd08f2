/** The durable objects part's figures (bench/durable.ts): medians of its runs, targets, and its markdown. */
import type { CpuLoad } from './cpu-load.js';
import type { MachineInfo } from './machine.js';
import { type Target, target } from './metrics.js';
import type { WorkloadName, WorkloadResult } from './workload/protocol.js';
import { median } from './workload/stats.js';
import type { ActorsResult, DurableProvider, DurableTarget } from './systems/zlink-durable.js';

/** Persistent Spot calls ÷ the same calls without `persist`, pipelined (issue 54). */
export const DURABLE_PIPELINED_TARGET = 0.5;

/** One measured run of one target. */
export interface DurableRun {
  readonly target: DurableTarget;
  readonly workload: WorkloadName;
  readonly rep: number;
  readonly result: WorkloadResult;
  /** State writes the target's rows took during the run (their versions' growth); absent for `none`. */
  readonly writes?: number;
  /** `redis`: Redis's own time per EVALSHA (one per write) and its CPU per write, µs. */
  readonly redis?: { readonly evalshaUs: number; readonly cpuUsPerWrite: number };
}

/** What PostgreSQL counted in the bench's database over every pipelined `postgres` run (warm-up included). */
export interface PostgresCounts {
  /** `xact_commit` less the bench's own reads: the store's statements. */
  readonly statements: number;
  readonly tupUpdated: number;
  /** The rows' versions' growth over the same window. */
  readonly writes: number;
}

/** Get-or-create of `count` Actors and one call each: `fill` sets the state, `restore` reads it back. */
export interface ActorsFigures {
  readonly fill: ActorsResult;
  readonly restore: ActorsResult;
}

export interface RowBytes {
  /** `MEMORY USAGE` of sampled rows, averaged, and `used_memory` growth ÷ rows over the fill. */
  readonly redis?: {
    readonly memoryUsage: number;
    readonly usedMemoryPerRow: number;
    readonly sampled: number;
  };
  /** `pg_total_relation_size` ÷ rows, and the average row as stored (`pg_column_size`). */
  readonly postgres?: { readonly totalPerRow: number; readonly rowBytes: number; readonly rows: number };
}

export interface DurableRuns {
  /** Where each provider's rows were; `postgres` may say why it did not run. */
  readonly stores: { readonly redis: string; readonly postgres: string };
  readonly providers: readonly DurableProvider[];
  /** msgpack size of a room's and a player's state, bytes. */
  readonly stateBytes: { readonly rooms: number; readonly players: number };
  readonly spots: number;
  readonly depth: number;
  readonly reps: number;
  readonly repMs: number;
  readonly postgresPoolSize: number;
  readonly runs: DurableRun[];
  readonly postgresCounts?: PostgresCounts;
  /** Actors saved and restored per target, `concurrency` at a time. */
  readonly actorCount: number;
  readonly actorConcurrency: number;
  readonly actors: Partial<Record<DurableTarget, ActorsFigures>>;
  readonly bytes: RowBytes;
  /** The graceful stop of the server holding the saved Actors (and the rooms), ms. */
  readonly stopMs: number;
  /** The objects that server held. */
  readonly objectsAtStop: number;
  readonly cpuLoad?: CpuLoad;
}

/** One target's medians over its repetitions. */
export interface TargetFigures {
  readonly pipelinedReqPerSec: number;
  readonly sequentialP50Us: number;
  readonly sequentialP99Us: number;
  readonly writesPerSec: number;
  readonly turnsPerWrite: number;
  /** Pipelined: CPU per call of the client and of the object server process, µs. */
  readonly clientCpuUs: number;
  readonly serverCpuUs: number;
}

export interface DurableSection extends DurableRuns {
  readonly figures: Record<DurableTarget, TargetFigures>;
  /** Pipelined req/s with persistence ÷ without, per provider. */
  readonly ratios: Partial<Record<DurableProvider, number>>;
  readonly redisCore?: { readonly evalshaUs: number; readonly cpuUsPerWrite: number };
  readonly targets: Target[];
}

const TARGETS: readonly DurableTarget[] = ['none', 'redis', 'postgres'];

export function summarizeDurable(runs: DurableRuns): DurableSection {
  const of = (t: DurableTarget, w: WorkloadName) =>
    runs.runs.filter((r) => r.target === t && r.workload === w);
  const med = (list: DurableRun[], pick: (r: DurableRun) => number | undefined) =>
    median(list.map((r) => pick(r) ?? Number.NaN));
  const figures = Object.fromEntries(
    TARGETS.map((t) => {
      const piped = of(t, 'pipelined');
      const seq = of(t, 'sequential');
      const seqPick = (key: 'p50Us' | 'p99Us') => (r: DurableRun) =>
        r.result.workload === 'sequential' ? r.result[key] : undefined;
      const requests = (r: DurableRun) =>
        r.result.workload === 'oneway' ? r.result.sent : r.result.requests;
      return [
        t,
        {
          pipelinedReqPerSec: med(piped, (r) =>
            r.result.workload === 'pipelined' ? r.result.reqPerSec : undefined,
          ),
          sequentialP50Us: med(seq, seqPick('p50Us')),
          sequentialP99Us: med(seq, seqPick('p99Us')),
          writesPerSec: med(piped, (r) =>
            r.writes === undefined ? undefined : r.writes / (r.result.elapsedMs / 1000),
          ),
          turnsPerWrite: med(piped, (r) => (r.writes ? requests(r) / r.writes : undefined)),
          clientCpuUs: med(piped, (r) => r.result.cost?.client.cpuUs),
          serverCpuUs: med(piped, (r) => r.result.cost?.server.cpuUs),
        },
      ];
    }),
  ) as Record<DurableTarget, TargetFigures>;
  const ratios: Partial<Record<DurableProvider, number>> = {};
  for (const p of runs.providers) ratios[p] = figures[p].pipelinedReqPerSec / figures.none.pipelinedReqPerSec;
  const redisRuns = of('redis', 'pipelined');
  const redisCore =
    redisRuns.length > 0
      ? {
          evalshaUs: med(redisRuns, (r) => r.redis?.evalshaUs),
          cpuUsPerWrite: med(redisRuns, (r) => r.redis?.cpuUsPerWrite),
        }
      : undefined;
  return {
    ...runs,
    figures,
    ratios,
    ...(redisCore && { redisCore }),
    targets: runs.providers.map((p) =>
      target(
        `pipelined Spot calls, every-turn persistence on ${p} ÷ none`,
        ratios[p],
        '≥',
        DURABLE_PIPELINED_TARGET,
      ),
    ),
  };
}

const n = (v: number | undefined): string =>
  v === undefined || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US');
const f1 = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(1));

export const PROVIDER_LABELS: Record<DurableTarget, string> = {
  none: 'no persist',
  redis: 'Redis (AOF, everysec)',
  postgres: 'PostgreSQL',
};

/** The part's markdown: what ran where, the table (one column per target), the restore and the stop. */
export function durableMarkdown(r: DurableSection | { error: string }, machine: MachineInfo): string[] {
  if ('error' in r) return [`**Durable objects failed**: ${r.error.split('\n')[0]}`, ''];
  const columns = TARGETS.filter((t) => t === 'none' || r.providers.includes(t as DurableProvider));
  const row = (metric: string, cell: (t: DurableTarget) => string, goal = '') =>
    `| ${metric} | ${columns.map(cell).join(' | ')} | ${goal} |`;
  const only = (p: DurableProvider, text: () => string) => (t: DurableTarget) => (t === p ? text() : '–');
  const persisted = (text: (p: DurableProvider) => string) => (t: DurableTarget) =>
    t === 'none' ? '–' : text(t);
  const core = r.redisCore;
  const pgCounts = r.postgresCounts;
  const actors = (t: DurableTarget, step: 'fill' | 'restore') => {
    const a = r.actors[t]?.[step];
    if (!a) return '–';
    const s = a.ms / 1000;
    const wrong =
      step === 'restore' && t !== 'none' && a.mismatched > 0 ? `, ${n(a.mismatched)} not as saved` : '';
    const failed = a.failed > 0 ? `, ${n(a.failed)} failed` : '';
    return `${s.toFixed(1)} s (${n(r.actorCount / s)}/s${wrong}${failed})`;
  };
  const load = r.cpuLoad
    ? ` CPU during the part: ${r.cpuLoad.benchPercent}% of both cores the bench's (its processes and Redis), ` +
      `${r.cpuLoad.otherPercent}% other processes (PostgreSQL's work for the bench among them).`
    : '';
  const pass = (ratio: number | undefined) =>
    ratio === undefined || !Number.isFinite(ratio)
      ? '–'
      : `${ratio.toFixed(2)}× (${ratio >= DURABLE_PIPELINED_TARGET ? 'PASS' : 'FAIL'})`;
  return [
    '### Durable objects',
    '',
    `On ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
      `${machine.date.slice(0, 10)}, load average ${machine.loadAverage.join(' ')} at the start.${load}`,
    '',
    `An object server and a client process on an object mesh (Location Store: a private redis-server without ` +
      `persistence). The same Spot class three times: without \`persist\`, and with \`persist\` (every turn, ` +
      `the default) on ${r.stores.redis} and on ${r.stores.postgres}. Every call is a turn that changes the ` +
      `room's state (a counter and five fields, ${r.stateBytes.rooms} bytes of msgpack), so a persistent ` +
      `room's reply waits until a write of it is acknowledged. Pipelined: ${r.depth} requests outstanding over ` +
      `${r.spots} rooms per column; sequential: one at a time. ${r.reps} reps of ${r.repMs / 1000} s, the ` +
      `columns interleaved (order rotating), medians. Writes are what the rows' versions grew by. Restore: ` +
      `${n(r.actorCount)} Actors per column got-or-created and given a state (${r.stateBytes.players} bytes), ` +
      `their server stopped gracefully (${(r.stopMs / 1000).toFixed(1)} s for its ${n(r.objectsAtStop)} objects), a fresh one ` +
      `started; then get-or-create and one read of each, ${r.actorConcurrency} at a time.`,
    '',
    `| metric | ${columns.map((t) => PROVIDER_LABELS[t]).join(' | ')} | target |`,
    `| --- | ${columns.map(() => '---').join(' | ')} | --- |`,
    row('pipelined req/s', (t) => n(r.figures[t].pipelinedReqPerSec)),
    row(
      'pipelined ÷ no persist',
      persisted((p) => pass(r.ratios[p])),
      `≥ ${DURABLE_PIPELINED_TARGET}×`,
    ),
    row(
      'sequential p50 / p99 µs',
      (t) => `${f1(r.figures[t].sequentialP50Us)} / ${f1(r.figures[t].sequentialP99Us)}`,
    ),
    row(
      'CPU µs per call, pipelined: client + object server',
      (t) => `${f1(r.figures[t].clientCpuUs)} + ${f1(r.figures[t].serverCpuUs)}`,
    ),
    row(
      'state writes/s (pipelined)',
      persisted((p) => n(r.figures[p].writesPerSec)),
    ),
    row(
      'turns per write (pipelined)',
      persisted((p) => r.figures[p].turnsPerWrite.toFixed(2)),
    ),
    row(
      'Redis time per write (EVALSHA time ÷ writes) → writes/s per Redis core',
      only('redis', () => (core ? `${core.evalshaUs.toFixed(1)} µs → ${n(1e6 / core.evalshaUs)}` : '–')),
    ),
    row(
      'Redis CPU per write, all of it (AOF, I/O) → writes/s per Redis core',
      only('redis', () =>
        core ? `${core.cpuUsPerWrite.toFixed(1)} µs → ${n(1e6 / core.cpuUsPerWrite)}` : '–',
      ),
    ),
    row(
      `writes/s per PostgreSQL connection (pool of ${r.postgresPoolSize})`,
      only('postgres', () => n(r.figures.postgres.writesPerSec / r.postgresPoolSize)),
    ),
    row(
      'PostgreSQL counted: tup_updated ÷ statements (xact_commit) = rows per statement',
      only('postgres', () =>
        pgCounts
          ? `${n(pgCounts.tupUpdated)} ÷ ${n(pgCounts.statements)} = ${f1(pgCounts.tupUpdated / pgCounts.statements)}`
          : '–',
      ),
    ),
    row(
      'bytes stored per saved object',
      persisted((p) => {
        const b = r.bytes;
        if (p === 'redis' && b.redis)
          return `${n(b.redis.memoryUsage)} (MEMORY USAGE); ${n(b.redis.usedMemoryPerRow)} (used_memory)`;
        if (p === 'postgres' && b.postgres)
          return `${n(b.postgres.totalPerRow)} (table + indexes); row ${n(b.postgres.rowBytes)}`;
        return '–';
      }),
    ),
    row(`save ${n(r.actorCount)}: get-or-create + first write`, (t) => actors(t, 'fill')),
    row(`restore ${n(r.actorCount)}: get-or-create + one read`, (t) => actors(t, 'restore')),
    '',
    `"no persist" restores nothing: its Actors come back new, the cost of a get-or-create alone.` +
      (pgCounts
        ? ` PostgreSQL counted ${n(pgCounts.tupUpdated)} rows updated where the rows' versions grew by ` +
          `${n(pgCounts.writes)} over the same runs (warm-up included).`
        : ''),
    '',
  ];
}
