/**
 * Instructions per request, counted by valgrind's callgrind around the measured rounds of
 * `call-overhead.js --route objects --target T --marks` (the Spot or the ChannelName request, client and
 * server in one process, zeromq's I/O threads included). A count, not a time: it holds still on a
 * machine whose clock speed and neighbours do not, so a small hot-path change shows up in it.
 * Slow (valgrind runs the process about 50 times slower): meant for before/after comparisons.
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/instructions.js [--n 20000] [--runs 2] [--targets channel,spot]
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const here = fileURLToPath(new URL('.', import.meta.url));

/** Callgrind's instruction counts of process `pid` since its last zeroing: all threads, and the first (JavaScript's). */
function instructions(pid: number): { all: number; main: number } {
  const out = execFileSync('callgrind_control', ['-e', 'Ir', String(pid)], { encoding: 'utf8' });
  const threads = [...out.matchAll(/^\s*Th\s*(\d+)\s+([\d,]+)\s*$/gm)].map((m) =>
    Number((m[2] as string).replace(/,/g, '')),
  );
  if (threads.length === 0) throw new Error(`callgrind_control printed no count:\n${out}`);
  return { all: threads.reduce((a, b) => a + b, 0), main: threads[0] as number };
}

/** One process under callgrind: the instructions of its measured rounds, per request. */
async function countOnce(target: string, n: number): Promise<{ all: number; main: number }> {
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      'node',
      join(here, 'call-overhead.js'),
      '--route',
      'objects',
      '--target',
      target,
      '--rounds',
      '1',
      '--n',
      String(n),
      '--marks',
    ],
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const pid = child.pid as number;
  let perRequest = { all: NaN, main: NaN };
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'measure:start') {
      execFileSync('callgrind_control', ['-z', String(pid)]);
      child.stdin.write('go\n');
    } else if (line === 'measure:end') {
      const { all, main } = instructions(pid);
      perRequest = { all: Math.round(all / n), main: Math.round(main / n) };
      child.stdin.end('go\n');
    }
  }
  return perRequest;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = (name: string, fallback: string) => {
    const at = argv.indexOf(name);
    return at >= 0 ? (argv[at + 1] as string) : fallback;
  };
  const n = Number(flag('--n', '20000'));
  const runs = Number(flag('--runs', '2'));
  const targets = flag('--targets', 'channel,spot').split(',');
  const counts: Record<string, { all: number; main: number }[]> = {};
  for (let r = 0; r < runs; r++)
    for (const target of targets) (counts[target] ??= []).push(await countOnce(target, n));
  // All threads: V8's background compiler and GC, and zeromq's I/O thread, work for the requests too;
  // the JavaScript thread's count alone is the one that repeats within a few per cent.
  const result: Record<string, unknown> = { n, runs, instructionsPerRequest: counts };
  const { channel, spot } = counts;
  if (channel && spot) {
    const ratio = (key: 'all' | 'main') =>
      Number((Math.min(...spot.map((x) => x[key])) / Math.min(...channel.map((x) => x[key]))).toFixed(3));
    result.spotOverChannel = { all: ratio('all'), main: ratio('main') };
  }
  console.log(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
