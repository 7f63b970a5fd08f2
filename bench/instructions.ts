/**
 * Instructions per call, counted by valgrind's callgrind around the measured rounds of one of the
 * in-process instruments, client and server in one process, zeromq's I/O threads included:
 * - `--tool objects` (default): `call-overhead.js --route objects --target T --marks`, the Spot or the
 *   ChannelName request (targets `channel,spot`);
 * - `--tool send`: `send-overhead.js --systems T --marks`, one-way messages of one system (targets
 *   `raw-framed,mesh,node,cs` by default; `raw-batched` too);
 * - `--tool sequential`: `sequential-overhead.js --target T --marks`, one request at a time (targets
 *   `raw,zlink` by default: raw zeromq.js one record per send, ZLink ClientServer; `mesh` too).
 * A count, not a time: it holds still on a machine whose clock speed and neighbours do not, so a small
 * hot-path change shows up in it. Slow (valgrind runs the process about 50 times slower): meant for
 * before/after comparisons. Each target's count is also given ÷ the first target's.
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/instructions.js [--tool objects|send|sequential] [--n 20000] [--runs 2]
 *     [--targets a,b] [--cache]
 * `--cache`: callgrind also simulates the caches (slower) and gives the JavaScript thread's first- and
 * last-level data cache misses per call — memory touched, which instruction counts do not show.
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

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
} as const;
type Tool = keyof typeof TOOLS;

/** One process under callgrind: the instructions of its measured rounds, per call. */
async function countOnce(tool: Tool, target: string, n: number, cache: boolean): Promise<Count> {
  const { script, args } = TOOLS[tool];
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      ...(cache ? ['--cache-sim=yes'] : []),
      '--callgrind-out-file=/dev/null',
      'node',
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
      child.stdin.end('go\n');
    }
  }
  return perCall;
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
  const perTarget: Record<string, Count[]> = {};
  for (let r = 0; r < runs; r++)
    for (const target of targets) (perTarget[target] ??= []).push(await countOnce(tool, target, n, cache));
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
