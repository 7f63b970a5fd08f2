/**
 * The top allocation sites of a V8 sampling heap profile (`.heapprofile`, as the bench's
 * `--alloc-prof` writes it, collected objects kept). Usage: node alloc-top.js <file.heapprofile> [count]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { where } from './profile-top.js';

interface HeapNode {
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly selfSize: number;
  readonly children: HeapNode[];
}

export interface AllocSite {
  readonly fn: string;
  readonly where: string;
  /** Bytes the samples stand for. */
  readonly bytes: number;
  readonly percent: number;
}

export interface AllocTop {
  readonly totalBytes: number;
  readonly rows: AllocSite[];
}

/** Bytes allocated per function (same name and place), largest first. */
export function topAllocations(file: string, count = 10): AllocTop {
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };
  const sites = new Map<string, { fn: string; where: string; bytes: number }>();
  let total = 0;
  const stack: HeapNode[] = [head];
  for (let node = stack.pop(); node; node = stack.pop()) {
    stack.push(...node.children);
    if (node.selfSize === 0) continue;
    total += node.selfSize;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName}@${url}:${lineNumber}`;
    let site = sites.get(key);
    if (!site)
      sites.set(key, (site = { fn: functionName || '(anonymous)', where: where(url, lineNumber), bytes: 0 }));
    site.bytes += node.selfSize;
  }
  const rows = [...sites.values()]
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, count)
    .map((s) => ({ ...s, percent: (s.bytes / total) * 100 }));
  return { totalBytes: total, rows };
}

export function renderAllocTop(title: string, top: AllocTop): string {
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  return [
    `${title}: ${mb(top.totalBytes)} MiB allocated in the samples; top allocation sites (self)`,
    '',
    '| self % | MiB | function | where |',
    '| --- | --- | --- | --- |',
    ...top.rows.map((r) => `| ${r.percent.toFixed(1)}% | ${mb(r.bytes)} | \`${r.fn}\` | ${r.where} |`),
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, count] = process.argv.slice(2);
  if (!file) throw new Error('usage: node alloc-top.js <file.heapprofile> [count]');
  process.stdout.write(renderAllocTop(file, topAllocations(file, count ? Number(count) : 10)));
}
