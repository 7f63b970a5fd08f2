/**
 * The top self-time functions of a V8 `.cpuprofile` (as written by `node --cpu-prof`).
 * Usage: node profile-top.js <file.cpuprofile> [count]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
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
  readonly percent: number;
}

function where(url: string, line: number): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const short = path.startsWith('/') ? relative(process.cwd(), path) : path;
  return `${short}:${line + 1}`;
}

/** Self time per function (same name and place), largest first. */
export function topSelfTime(file: string, count = 10): SelfTime[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, { fn: string; where: string; us: number }>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i] as number);
    const dt = profile.timeDeltas[i] ?? 0;
    if (!node) continue;
    total += dt;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName}@${url}:${lineNumber}`;
    let entry = self.get(key);
    if (!entry)
      self.set(key, (entry = { fn: functionName || '(anonymous)', where: where(url, lineNumber), us: 0 }));
    entry.us += dt;
  }
  return [...self.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, count)
    .map((e) => ({ fn: e.fn, where: e.where, ms: e.us / 1000, percent: (e.us / total) * 100 }));
}

export function renderTop(title: string, rows: SelfTime[]): string {
  const lines = rows.map(
    (r) => `| ${r.percent.toFixed(1)}% | ${r.ms.toFixed(0)} | \`${r.fn}\` | ${r.where} |`,
  );
  return [
    `${title}`,
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
