import type { SystemName } from './options.js';
import { type Cell, METRICS } from './metrics.js';
import type { BenchReport } from './report.js';
import { SYSTEM_LABELS, systemKey } from './system-runs.js';
import {
  OBJECT_METRICS,
  OBJECT_TARGET_LABELS,
  OBJECT_WORKLOADS,
  type ObjectTarget,
  type ObjectsSection,
} from './objects-report.js';

function num(value: number | undefined, digits: number): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Median, and the spread of the repetitions as ± half their range, in % of the median. */
function showCell(c: Cell | undefined, digits: number, reps: number): string {
  if (!c) return '–';
  const missing = c.reps.length < reps ? ` (${c.reps.length} of ${reps} runs)` : '';
  if (c.reps.length < 2) return `${num(c.median, digits)}${missing}`;
  const spread = ((Math.max(...c.reps) - Math.min(...c.reps)) / 2 / c.median) * 100;
  return `${num(c.median, digits)} ±${spread.toFixed(0)}%${missing}`;
}

const ratio = (r: number | undefined, digits = 2): string =>
  r === undefined || !Number.isFinite(r) ? '–' : `${r.toFixed(digits)}×`;

/** `HEAD~3 (1a2b3c4)`, or just the short commit when that is what was given. */
function baselineName(base: NonNullable<BenchReport['baseline']>): string {
  return base.commit.startsWith(base.rev) ? base.short : `${base.rev} (${base.short})`;
}

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The report as markdown: the comparison table, the selector table, the targets, the load. */
export function renderMarkdown(report: BenchReport): string {
  const { machine, settings } = report;
  const names = Object.keys(report.systems);
  const current = names.filter((n) => report.systems[n]?.baseline === undefined) as SystemName[];
  const others = current.includes('zlink') ? current.filter((n) => n !== 'zlink') : [];
  const base = report.baseline;
  const compared = base
    ? current.filter((n) => report.systems[systemKey({ name: n, baseline: base.short })])
    : [];
  const out: string[] = [];
  out.push(
    `## nestjs-zlink bench — ${machine.date}${base ? ` — baseline ${baselineName(base)}` : ''}`,
    '',
    `${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}; ` +
      `zeromq ${machine.versions.zeromq}, msgpackr ${machine.versions.msgpackr}, @nestjs/microservices ${machine.versions['@nestjs/microservices']}` +
      (machine.git
        ? `; lib at ${machine.git.commit}${machine.git.libDirty ? ' + uncommitted changes' : ''}`
        : ''),
    '',
    `Payload: ${settings.payloadBytes.msgpack} bytes msgpack (${settings.payloadBytes.json} bytes JSON). ` +
      `Client and server are separate processes on 127.0.0.1. Each workload: ${settings.reps} repetition(s) of ` +
      `${settings.repMs / 1000} s per system, systems interleaved (the order rotates each repetition), ` +
      `${settings.warmupMs} ms unmeasured warm-up before the first; cells are medians, ± is half the range of the repetitions. ` +
      `Pipelined keeps ${settings.depth} requests outstanding; one-way starts ${settings.burst} sends per event-loop turn ` +
      `and waits for their admission, and its rate counts what the server received until its final count came back.` +
      (settings.idleMs > 0
        ? ` Sequential sleeps ${settings.idleMs} ms before each request (--idle-ms): each one finds both processes idle.`
        : ''),
    '',
  );
  const header = [
    'metric',
    ...names.map((n) => report.systems[n]?.label ?? n),
    ...others.map((n) => `ZLink ÷ ${SYSTEM_LABELS[n]}`),
    ...compared.map((n) => `${SYSTEM_LABELS[n]} ÷ @${base?.short}`),
  ];
  const rows = METRICS.filter((m) => settings.workloads.includes(m.workload)).map((m) => [
    `${m.label} (${m.better} is better)`,
    ...names.map((n) => showCell(report.systems[n]?.medians[m.key], m.digits, settings.reps)),
    ...others.map((n) => ratio(report.ratios[m.key]?.[n])),
    ...compared.map((n) => ratio(base?.ratios[m.key]?.[n])),
  ]);
  // `--only fanout`, `--only objects`: no socket system ran, so no empty table.
  if (names.length > 0) out.push(table(header, rows), '');
  if (base)
    out.push(
      `\`@${base.short}\`: the same system built from the baseline, ${baselineName(base)}, run interleaved with ` +
        `the current build; \`÷ @${base.short}\` is current ÷ baseline.`,
      '',
    );
  const lost = Object.entries(report.oneWayLoss).filter(([, n]) => n !== 0);
  if (lost.length > 0)
    out.push(`**One-way loss** (sent − received): ${lost.map(([s, n]) => `${s} ${n}`).join(', ')}`, '');
  for (const s of Object.values(report.systems)) {
    if (s.error) out.push(`**${s.label} failed**: ${s.error.split('\n')[0]}`, '');
    for (const f of s.failures) {
      out.push(
        `**${s.label}: run ${f.rep} of ${f.workload} failed** (left out; fresh processes for the next run): ` +
          `${f.error.split('\n')[0]}`,
        '',
      );
    }
  }

  if (Array.isArray(report.selector)) {
    const rows = report.selector;
    const find = (n: number, w: string, mode: string) =>
      rows.find((r) => r.n === n && r.weights === w && r.mode === mode);
    const selectorRows: string[][] = [];
    for (const weights of ['equal', 'skewed'] as const) {
      for (const n of [...new Set(rows.map((r) => r.n))]) {
        const pre = find(n, weights, 'precomputed');
        const per = find(n, weights, 'per-call');
        selectorRows.push([
          String(n),
          weights === 'equal' ? 'equal (100)' : 'skewed (100/300)',
          num(pre?.nsPerPick, 2),
          String(pre?.isPrecomputed ?? '–'),
          num(pre?.prepareMs, 2),
          num(per?.nsPerPick, 2),
          String(per?.isPrecomputed ?? '–'),
        ]);
      }
    }
    const r0 = rows[0];
    out.push(
      `Selector (in-process, \`TargetSelector.pick\`, median of ${r0?.reps ?? '–'} repetitions of ` +
        `${num(rows.find((r) => r.mode === 'precomputed')?.picksPerRep, 0)} picks precomputed / ` +
        `${num(rows.find((r) => r.mode === 'per-call')?.picksPerRep, 0)} per-call, after a warm-up):`,
      '',
      table(
        [
          'N',
          'weights',
          'precomputed ns/pick',
          'isPrecomputed',
          'prepare ms',
          'per-call ns/pick',
          'isPrecomputed (per-call)',
        ],
        selectorRows,
      ),
      '',
    );
  } else if (report.selector) {
    out.push(`**Selector failed**: ${report.selector.error.split('\n')[0]}`, '');
  }

  if (Array.isArray(report.fanout)) {
    out.push(
      'Fanout (publisher and subscriber processes; median of the repetitions):',
      '',
      table(
        ['system', 'published/s', 'delivered/s', 'dropped (counted)'],
        report.fanout.map((r) => [
          r.system === 'zlink' ? 'ZLink classic fanout' : 'raw zeromq.js PUB→SUB',
          num(r.publishPerSec, 0),
          num(r.deliveredPerSec, 0),
          r.system === 'zlink' ? String(r.dropped) : '–',
        ]),
      ),
      '',
    );
  } else if (report.fanout) {
    out.push(`**Fanout failed**: ${report.fanout.error.split('\n')[0]}`, '');
  }

  if (report.objects && 'error' in report.objects) {
    out.push(`**Objects failed**: ${report.objects.error.split('\n')[0]}`, '');
  } else if (report.objects) {
    out.push(...objectsSection(report.objects, settings.workloads, settings.reps));
  }

  // `--scale` alone measures none of them: no table of n/a.
  if (report.targets.some((t) => t.result !== 'n/a'))
    out.push(
      'Targets:',
      '',
      table(
        ['target', 'measured', 'threshold', 'result'],
        report.targets.map((t) => [
          t.name,
          ratio(t.value, 3),
          t.threshold,
          t.note ? `${t.result} (${t.note})` : t.result,
        ]),
      ),
      '',
    );
  const load = report.cpuLoad;
  if (load) {
    const warn = load.otherPercent > 5 ? ' — **other processes were busy: the numbers are disturbed**' : '';
    out.push(
      `CPU during the run (share of all ${machine.cores} cores): ${load.machineBusyPercent}% busy, ` +
        `${load.benchPercent}% the bench, ${load.otherPercent}% other processes${warn}.`,
      '',
    );
  }
  return out.join('\n');
}

/** Spots next to ChannelName: the table, then the cost of a miss. */
function objectsSection(
  objects: ObjectsSection,
  workloads: BenchReport['settings']['workloads'],
  reps: number,
): string[] {
  const metrics = OBJECT_METRICS.filter((m) => workloads.includes(m.workload));
  const rows = metrics.map((m) => [
    `${m.label} (${m.better} is better)`,
    showCell(objects.medians.channel[m.key], m.digits, reps),
    showCell(objects.medians.spot[m.key], m.digits, reps),
    ratio(objects.ratios[m.key]),
    showCell(objects.medians.miss[m.key], m.digits, reps),
  ]);
  for (const w of OBJECT_WORKLOADS.filter((x) => workloads.includes(x)))
    rows.push([
      `store reads per request, ${w} (Redis INFO commandstats)`,
      num(objects.storeReadsPerRequest.channel[w], 3),
      num(objects.storeReadsPerRequest.spot[w], 3),
      '',
      num(objects.storeReadsPerRequest.miss[w], 3),
    ]);
  for (const w of OBJECT_WORKLOADS.filter((x) => workloads.includes(x))) {
    const cpu = (t: ObjectTarget) => {
      const c = objects.cpuUsPerRequest[t][w];
      return c ? `${num(c.client, 1)} + ${num(c.server, 1)}` : '–';
    };
    rows.push([
      `CPU µs per request, ${w}: client + server process (every thread, lower is better)`,
      cpu('channel'),
      cpu('spot'),
      objects.cpuRatios[w] === undefined ? '' : ratio(objects.cpuRatios[w]),
      cpu('miss'),
    ]);
  }
  const us = (v: number) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(1)} µs` : '–');
  return [
    `Objects: Spot requests by global id next to ChannelName requests, on the same object server and client ` +
      `processes (object mesh, discovery 'auto', Location Store: ${objects.store}); the client calls ` +
      `${objects.spots} Spots in turn. "Not cached" is a second runtime in the client process with ` +
      `routeCacheMaxAgeMs 0: each call reads its route from the store first. Store reads count every ` +
      `EVALSHA/EVAL/GET Redis served during the run, the runtimes' lease refreshes included, and a cached ` +
      `route is read again once it is routeCacheMaxAgeMs old (default 15 s: each Spot once per 15 s).`,
    '',
    table(
      [
        'metric',
        OBJECT_TARGET_LABELS.channel,
        OBJECT_TARGET_LABELS.spot,
        'Spot ÷ ChannelName',
        OBJECT_TARGET_LABELS.miss,
      ],
      rows,
    ),
    '',
    `The cost of a miss: ${us(objects.missCostP50Us)} at sequential p50 (not cached − cached), ` +
      `${us(objects.missCostPipelinedUs)} per request pipelined (1 ÷ req/s, not cached − cached).`,
    '',
  ];
}
