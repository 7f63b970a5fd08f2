/**
 * The top self-time functions of a V8 `.cpuprofile` (as written by `node --cpu-prof` or the
 * bench's `--cpu-prof`). Usage: node profile-top.js <file.cpuprofile> [count]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly children?: number[];
}

interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

export interface SelfTime {
  readonly fn: string;
  readonly where: string;
  readonly ms: number;
  /** Share of the busy (non-idle) time. */
  readonly percent: number;
}

export interface ProfileTop {
  readonly totalMs: number;
  readonly idlePercent: number;
  readonly rows: SelfTime[];
}

/** `path:line` of a frame, relative to the working directory. */
export function where(url: string, line: number): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return `${path.startsWith('/') ? relative(process.cwd(), path) : path}:${line + 1}`;
}

/** Self time per function (same name and place), largest first; `(idle)` is reported apart. */
export function topSelfTime(file: string, count = 10): ProfileTop {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);
  const self = new Map<string, { fn: string; where: string; us: number }>();
  let total = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i] as number);
    const dt = profile.timeDeltas[i] ?? 0;
    if (!node) continue;
    total += dt;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += dt;
      continue;
    }
    // A native function (an addon's method, e.g. zeromq's send) has no script and often a
    // misleading name: say which JS function called it instead.
    const caller = url === '' && !functionName.startsWith('(') ? parentOf.get(node.id)?.callFrame : undefined;
    const key = `${functionName}@${url}:${lineNumber}@${caller ? `${caller.url}:${caller.lineNumber}` : ''}`;
    let entry = self.get(key);
    if (!entry) {
      const fn = caller
        ? `native ${functionName}, called by ${caller.functionName || '(anonymous)'}`
        : functionName || '(anonymous)';
      const place = caller ? where(caller.url, caller.lineNumber) : where(url, lineNumber);
      self.set(key, (entry = { fn, where: place, us: 0 }));
    }
    entry.us += dt;
  }
  const busy = total - idle;
  const rows = [...self.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, count)
    .map((e) => ({ fn: e.fn, where: e.where, ms: e.us / 1000, percent: (e.us / busy) * 100 }));
  return { totalMs: total / 1000, idlePercent: (idle / total) * 100, rows };
}

export function renderTop(title: string, top: ProfileTop): string {
  const lines = top.rows.map(
    (r) => `| ${r.percent.toFixed(1)}% | ${r.ms.toFixed(0)} | \`${r.fn}\` | ${r.where} |`,
  );
  return [
    `${title}: ${(top.totalMs / 1000).toFixed(1)} s profiled, ${top.idlePercent.toFixed(0)}% idle; top self time (% of busy)`,
    '',
    '| self % | self ms | function | where |',
    '| --- | --- | --- | --- |',
    ...lines,
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, count] = process.argv.slice(2);
  if (!file) throw new Error('usage: node profile-top.js <file.cpuprofile> [count]');
  process.stdout.write(renderTop(file, topSelfTime(file, count ? Number(count) : 10)));
}
