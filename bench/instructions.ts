/**
 * Instructions per call, counted by valgrind's callgrind around the measured rounds of one of the
 * in-process instruments, client and server in one process, zeromq's I/O threads included:
 * - `--tool objects` (default): `call-overhead.js --route objects --target T --marks`, the Spot or the
 *   ChannelName request (targets `channel,spot`);
 * - `--tool send`: `send-overhead.js --systems T --marks`, one-way messages of one system (targets
 *   `raw-framed,mesh,node,cs` by default; `raw-batched` too);
 * - `--tool sequential`: `sequential-overhead.js --target T --marks`, one request at a time (targets
 *   `raw,zlink` by default: raw zeromq.js one record per send, ZLink ClientServer; `mesh` and
 *   `raw-mesh`, the MeshNode's ROUTER-to-ROUTER sockets in raw zeromq.js, too);
 * - `--tool sessions`: `session-overhead.js --target T --marks`, a request straight to an Actor with
 *   `toActor` or relayed through a session (targets `direct,relayed-tcp` by default; `relayed-tls` and
 *   `relayed-websocket` too), the session peer's own work included.
 * A count, not a time: it holds still on a machine whose clock speed and neighbours do not, so a small
 * hot-path change shows up in it. Slow (valgrind runs the process about 50 times slower): meant for
 * before/after comparisons. Each target's count is also given ÷ the first target's.
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/instructions.js [--tool objects|send|sequential|sessions] [--n 20000] [--runs 2]
 *     [--targets a,b] [--cache] [--functions [N]]
 * `--cache`: callgrind also simulates the caches (slower) and gives the JavaScript thread's first- and
 * last-level data cache misses per call — memory touched, which instruction counts do not show.
 * `--functions [N]`: also where the instructions go (all threads, self cost per call), V8's compiled
 * JavaScript named through node's perf map (bench/callgrind-functions.ts): per target by kind of code,
 * and the N functions (default 30) that differ most from the first target, each way.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { groupOf, selfInstructions } from './callgrind-functions.js';

const here = fileURLToPath(new URL('.', import.meta.url));

/** Per call: instructions on all threads and on the first (JavaScript's); with `--cache`, its simulated misses. */
interface Count {
  all: number;
  main: number;
  /** First-level data cache misses (reads and writes) of the JavaScript thread. */
  d1Misses?: number;
  /** Last-level data cache misses (reads and writes) of the JavaScript thread. */
  llMisses?: number;
}

const CACHE_EVENTS = 'Ir,D1mr,D1mw,DLmr,DLmw';

/** Callgrind's counts of process `pid` since its last zeroing, per call (`n` calls). */
function counts(pid: number, n: number, cache: boolean): Count {
  const out = execFileSync('callgrind_control', ['-e', cache ? CACHE_EVENTS : 'Ir', String(pid)], {
    encoding: 'utf8',
  });
  // One line per thread: `Th 1  447,754,124 574,101 ...`, a '.' for a zero.
  const threads = [...out.matchAll(/^\s*Th\s*\d+\s+([\d,. ]+?)\s*$/gm)].map((m) =>
    (m[1] as string).split(/\s+/).map((x) => (x === '.' ? 0 : Number(x.replace(/,/g, '')))),
  );
  if (threads.length === 0) throw new Error(`callgrind_control printed no count:\n${out}`);
  const [ir = 0, d1r = 0, d1w = 0, llr = 0, llw = 0] = threads[0] as number[];
  const per = (x: number) => Math.round((x / n) * 10) / 10;
  const count: Count = {
    all: Math.round(threads.reduce((sum, t) => sum + (t[0] as number), 0) / n),
    main: Math.round(ir / n),
  };
  if (cache) Object.assign(count, { d1Misses: per(d1r + d1w), llMisses: per(llr + llw) });
  return count;
}

/** Each tool: its script, the arguments that run one target's rounds, its default targets. */
const TOOLS = {
  objects: {
    script: 'call-overhead.js',
    args: (target: string) => ['--route', 'objects', '--target', target],
    targets: 'channel,spot',
  },
  send: {
    script: 'send-overhead.js',
    args: (target: string) => ['--systems', target],
    targets: 'raw-framed,mesh,node,cs',
  },
  sequential: {
    script: 'sequential-overhead.js',
    args: (target: string) => ['--target', target],
    targets: 'raw,zlink',
  },
  sessions: {
    script: 'session-overhead.js',
    args: (target: string) => ['--target', target],
    targets: 'direct,relayed-tcp',
  },
} as const;
type Tool = keyof typeof TOOLS;

/** One process under callgrind: the instructions of its measured rounds, per call, and by function when asked. */
async function countOnce(
  tool: Tool,
  target: string,
  n: number,
  cache: boolean,
  functions: boolean,
): Promise<{ count: Count; byFunction?: Map<string, number> }> {
  const { script, args } = TOOLS[tool];
  const dir = functions ? mkdtempSync(join(tmpdir(), 'zlink-callgrind-')) : undefined;
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      ...(cache ? ['--cache-sim=yes'] : []),
      ...(dir ? ['--dump-instr=yes', `--callgrind-out-file=${dir}/out`] : ['--callgrind-out-file=/dev/null']),
      'node',
      ...(dir ? ['--perf-basic-prof-only-functions'] : []),
      join(here, script),
      ...args(target),
      '--rounds',
      '1',
      '--n',
      String(n),
      '--marks',
    ],
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const pid = child.pid as number;
  let perCall: Count = { all: NaN, main: NaN };
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'measure:start') {
      execFileSync('callgrind_control', ['-z', String(pid)]);
      child.stdin.write('go\n');
    } else if (line === 'measure:end') {
      perCall = counts(pid, n, cache);
      // A dump of the counts since the zeroing, to `out.1`, before the rest of the run adds to them.
      if (dir) execFileSync('callgrind_control', ['-d', 'measured', String(pid)]);
      child.stdin.end('go\n');
    }
  }
  await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
  if (!dir) return { count: perCall };
  const map = `/tmp/perf-${pid}.map`;
  try {
    const self = selfInstructions(`${dir}/out.1`, map);
    for (const [fn, ir] of self) self.set(fn, ir / n);
    return { count: perCall, byFunction: self };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(map, { force: true });
  }
}

/** Sums per kind of code, then the `top` functions whose self cost differs most from the first target's. */
function printFunctions(targets: string[], byFunction: Map<string, number>[], top: number): void {
  const fixed = (x: number) => Math.round(x).toLocaleString('en-US');
  const groups = byFunction.map((self) => {
    const sums = new Map<string, number>();
    for (const [fn, ir] of self) sums.set(groupOf(fn), (sums.get(groupOf(fn)) ?? 0) + ir);
    return sums;
  });
  const kinds = [...new Set(groups.flatMap((g) => [...g.keys()]))].sort(
    (a, b) => (groups[0]!.get(b) ?? 0) - (groups[0]!.get(a) ?? 0),
  );
  console.log(`| instructions per call, all threads | ${targets.join(' | ')} |`);
  console.log(`| --- |${' --- |'.repeat(targets.length)}`);
  for (const kind of kinds)
    console.log(`| ${kind} | ${groups.map((g) => fixed(g.get(kind) ?? 0)).join(' | ')} |`);
  const [first, ...rest] = byFunction as [Map<string, number>, ...Map<string, number>[]];
  rest.forEach((self, i) => {
    const fns = [...new Set([...first.keys(), ...self.keys()])];
    const diffs = fns
      .map((fn) => ({ fn, d: (self.get(fn) ?? 0) - (first.get(fn) ?? 0) }))
      .sort((a, b) => b.d - a.d);
    // Each way apart: where fewer than `top` differ one way, the two ends would share rows.
    const show = [...diffs.slice(0, top).filter((x) => x.d > 0), ...diffs.slice(-top).filter((x) => x.d < 0)];
    console.log(
      `\n${targets[i + 1]} − ${targets[0]}, instructions per call by function (the largest each way):`,
    );
    for (const { fn, d } of show)
      if (Math.abs(d) >= 1) console.log(`${fixed(d).padStart(8)}  ${fn.slice(0, 150)}`);
  });
  console.log('');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = (name: string, fallback: string) => {
    const at = argv.indexOf(name);
    return at >= 0 ? (argv[at + 1] as string) : fallback;
  };
  const n = Number(flag('--n', '20000'));
  const runs = Number(flag('--runs', '2'));
  const tool = flag('--tool', 'objects') as Tool;
  if (!(tool in TOOLS)) throw new Error(`--tool must be ${Object.keys(TOOLS).join(', ')}`);
  const targets = flag('--targets', TOOLS[tool].targets).split(',');
  const cache = argv.includes('--cache');
  const functionsAt = argv.indexOf('--functions');
  const functions = functionsAt >= 0;
  const top =
    functionsAt >= 0 && /^\d+$/.test(argv[functionsAt + 1] ?? '') ? Number(argv[functionsAt + 1]) : 30;
  const perTarget: Record<string, Count[]> = {};
  // By function: the first run's, one map per target.
  const byFunction: Map<string, number>[] = [];
  for (let r = 0; r < runs; r++)
    for (const target of targets) {
      const { count, byFunction: self } = await countOnce(tool, target, n, cache, functions && r === 0);
      (perTarget[target] ??= []).push(count);
      if (self) byFunction.push(self);
    }
  if (functions) printFunctions(targets, byFunction, top);
  // All threads: V8's background compiler and GC, and zeromq's I/O thread, work for the requests too;
  // the JavaScript thread's count alone is the one that repeats within a few per cent.
  const result: Record<string, unknown> = { tool, n, runs, instructionsPerCall: perTarget };
  const least = (target: string, key: 'all' | 'main') => Math.min(...perTarget[target]!.map((x) => x[key]));
  const [first, ...rest] = targets as [string, ...string[]];
  result.overFirst = Object.fromEntries(
    rest.map((t) => [
      `${t} ÷ ${first}`,
      {
        all: Number((least(t, 'all') / least(first, 'all')).toFixed(3)),
        main: Number((least(t, 'main') / least(first, 'main')).toFixed(3)),
      },
    ]),
  );
  console.log(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
