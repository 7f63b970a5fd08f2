/**
 * Self instructions per function from a callgrind dump, with V8's compiled JavaScript named.
 *
 * Callgrind sees JIT code as nameless addresses; node's `--perf-basic-prof-only-functions` writes
 * `/tmp/perf-PID.map` (start, size, name of each compiled function), and a dump made with
 * `--dump-instr=yes` gives every cost line its instruction address, so each nameless cost is charged to
 * the JavaScript function whose code holds it. V8 frees code and reuses its addresses (the map only
 * grows), so where two entries hold an address the later one, the code there now, takes it.
 */
import { readFileSync } from 'node:fs';

/** One compiled function's code range, from the perf map; `order`: its line in the map. */
interface CodeRange {
  start: number;
  end: number;
  name: string;
  order: number;
}

/** How far back from the last range starting at or before an address to look for a later one holding it. */
const OVERLAP_SCAN = 64;

function readPerfMap(path: string): CodeRange[] {
  const ranges: CodeRange[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (!m) continue;
    const start = parseInt(m[1] as string, 16);
    const end = start + parseInt(m[2] as string, 16);
    ranges.push({ start, end, name: m[3] as string, order: ranges.length });
  }
  return ranges.sort((a, b) => a.start - b.start);
}

function rangeOf(ranges: CodeRange[], address: number): CodeRange | undefined {
  // The last range that starts at or before the address, then the latest of those near it that hold it.
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((ranges[mid] as CodeRange).start <= address) lo = mid + 1;
    else hi = mid - 1;
  }
  let found: CodeRange | undefined;
  for (let i = hi; i >= 0 && i > hi - OVERLAP_SCAN; i--) {
    const r = ranges[i] as CodeRange;
    if (address < r.end && (found === undefined || r.order > found.order)) found = r;
  }
  return found;
}

/** What a function is, for the summary: where its code comes from. */
export function groupOf(fn: string): string {
  if (fn.startsWith('JS ')) {
    if (fn.includes('/node_modules/msgpackr/')) return 'JavaScript: msgpackr';
    if (fn.includes('/node_modules/zeromq/')) return 'JavaScript: zeromq.js';
    if (fn.includes('/lib/')) return 'JavaScript: nestjs-zlink';
    if (fn.includes('/bench/')) return 'JavaScript: the bench';
    return 'JavaScript: node and the rest';
  }
  if (fn.includes('[addon.node]')) return 'zeromq addon (libzmq and its binding)';
  if (fn.startsWith('Builtins_')) return 'V8 builtins';
  if (fn.includes('[libc.so')) return 'libc (malloc, free, system calls)';
  if (fn.includes('v8::')) return 'V8 runtime (allocation, GC, lookups)';
  if (fn.includes('[node]')) return 'node (C++, N-API)';
  return 'other';
}

/**
 * Self instructions (`Ir`) per function in callgrind dump `dumpPath`, all threads; JIT addresses named
 * from perf map `mapPath` as `JS <name>`, other functions as `<name> [<object file>]`.
 */
export function selfInstructions(dumpPath: string, mapPath: string): Map<string, number> {
  const ranges = readPerfMap(mapPath);
  const names = new Map<string, string>();
  // Callgrind's name compression: `(12) name` defines id 12, a later `(12)` refers to it.
  const named = (kind: string, rest: string): string => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(rest);
    if (!m) return rest;
    const key = `${kind}${m[1]}`;
    if (m[2] !== undefined) names.set(key, m[2]);
    return names.get(key) ?? '?';
  };
  const self = new Map<string, number>();
  let fn = '';
  let object = '';
  let positions = 2;
  let afterCalls = false;
  const last = [0, 0];
  // A position is absolute (`0x1a2b`), relative to the last one (`+3`, `-0x10`) or the same (`*`).
  const position = (token: string, k: number): number => {
    if (token === '*') return last[k] as number;
    const sign = token[0] === '-' ? -1 : 1;
    last[k] = /^[+-]/.test(token) ? (last[k] as number) + sign * Number(token.slice(1)) : Number(token);
    return last[k] as number;
  };
  for (const line of readFileSync(dumpPath, 'utf8').split('\n')) {
    if (line === '') continue;
    if (line.startsWith('positions:')) positions = line.split(/\s+/).length - 1;
    else if (line.startsWith('fn=')) fn = named('fn', line.slice(3));
    else if (line.startsWith('ob=')) object = named('ob', line.slice(3));
    else if (line.startsWith('cfn=')) named('fn', line.slice(4));
    else if (line.startsWith('cob=')) named('ob', line.slice(4));
    else if (/^(fl|fi|fe)=/.test(line)) named('fl', line.slice(3));
    else if (/^cf[il]=/.test(line)) named('fl', line.slice(4));
    else if (line.startsWith('calls=')) afterCalls = true;
    else if (/^[0-9+\-*]/.test(line)) {
      const tokens = line.split(' ');
      const address = position(tokens[0] as string, 0);
      if (positions > 1) position(tokens[1] as string, 1);
      // The line after `calls=` is the call's inclusive cost, not the caller's own.
      if (afterCalls) {
        afterCalls = false;
        continue;
      }
      const ir = Number(tokens[positions] ?? 0);
      let key: string;
      if (fn.startsWith('0x') || fn === '???') {
        const code = rangeOf(ranges, address);
        key = code ? `JS ${code.name}` : `(no name) [${object.split('/').pop()}]`;
      } else key = `${fn} [${object.split('/').pop()}]`;
      self.set(key, (self.get(key) ?? 0) + ir);
    }
  }
  return self;
}
