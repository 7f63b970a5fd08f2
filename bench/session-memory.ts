/**
 * What one idle session costs the gateway, on one listener kind, however the sessions arrive
 * (docs/sessions.md#what-a-tls-session-costs has its figures): a fresh gateway process with that one
 * entry (bench/systems/session-memory-gateway.ts, no Redis) and a client process of the sessions bench
 * (bench/systems/zlink-sessions-client.ts) opening `--count` sessions, `--concurrency` at once, each
 * lane pausing `--gap-ms` after each session. Read in the gateway after two full collections, before
 * and one second after: RSS and JavaScript heap per session, and the gateway's CPU per session opened
 * (the TCP accept, the TLS handshake, the Hello and the Welcome). `--preload` runs the gateway with
 * another malloc (`LD_PRELOAD`, e.g. jemalloc's `libjemalloc.so.2`).
 *
 * Lighter than the sessions bench's idle figure (bench/sessions.ts), which needs its object mesh and
 * Redis: this one isolates the listener, for comparing kinds, certificates and arrival patterns.
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/session-memory.js [--kind tcp|tls|websocket] [--cert rsa|ecdsa]
 *     [--count 5000] [--concurrency 100] [--gap-ms 0] [--preload /path/to/libjemalloc.so.2]
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchChild } from './children.js';
import { BENCH_SESSION_KINDS, type BenchCert, type BenchSessionKind } from './systems/zlink-sessions.js';

const STARTUP_TIMEOUT_MS = 60_000;
/** Settling time before each reading: the last handshakes' garbage collected, timers run. */
const SETTLE_MS = 1000;

interface Args {
  readonly kind: BenchSessionKind;
  readonly cert: BenchCert;
  readonly count: number;
  readonly concurrency: number;
  readonly gapMs: number;
  readonly preload: string | undefined;
}

function parse(argv: string[]): Args {
  const flag = (name: string, fallback: string): string => {
    const at = argv.indexOf(name);
    return at >= 0 ? (argv[at + 1] as string) : fallback;
  };
  const kind = flag('--kind', 'tls') as BenchSessionKind;
  if (!BENCH_SESSION_KINDS.includes(kind)) throw new Error(`--kind: one of ${BENCH_SESSION_KINDS.join('|')}`);
  const cert = flag('--cert', 'rsa') as BenchCert;
  if (cert !== 'rsa' && cert !== 'ecdsa') throw new Error('--cert: rsa or ecdsa');
  const preload = flag('--preload', '');
  return {
    kind,
    cert,
    count: Number(flag('--count', '5000')),
    concurrency: Number(flag('--concurrency', '100')),
    gapMs: Number(flag('--gap-ms', '0')),
    preload: preload === '' ? undefined : preload,
  };
}

interface Reading {
  readonly rss: number;
  readonly heapUsed: number;
  readonly cpuUs: number;
  readonly sessions: number;
}

async function read(gateway: BenchChild): Promise<Reading> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  gateway.command({ type: 'rss' });
  return (await gateway.next('rss', 30_000)) as unknown as Reading;
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'systems');
  const gateway = new BenchChild('gateway', join(dir, 'session-memory-gateway.js'), {
    env: {
      BENCH_SESSION_KIND: args.kind,
      BENCH_CERT: args.cert,
      ...(args.preload !== undefined && { LD_PRELOAD: args.preload }),
    },
    execArgv: ['--expose-gc'],
  });
  const client = new BenchChild('client', join(dir, 'zlink-sessions-client.js'));
  try {
    const { endpoint } = (await gateway.next('ready', STARTUP_TIMEOUT_MS)) as unknown as { endpoint: string };
    await client.next('ready', STARTUP_TIMEOUT_MS);
    const before = await read(gateway);
    client.command({
      type: 'idle',
      url: endpoint,
      count: args.count,
      sources: ['127.0.0.1'],
      concurrency: args.concurrency,
      gapMs: args.gapMs,
    });
    const opened = await client.next('idle-open', 3_600_000);
    const after = await read(gateway);
    const per = (field: keyof Reading): number =>
      Math.round((after[field] - before[field]) / Math.max(1, after.sessions));
    console.log(
      JSON.stringify({
        ...args,
        sessions: after.sessions,
        failed: opened.failed,
        openPerSec: Math.round(opened.perSec as number),
        rssPerSession: per('rss'),
        heapUsedPerSession: per('heapUsed'),
        gatewayCpuUsPerSession: per('cpuUs'),
      }),
    );
  } finally {
    await gateway.stop(10_000);
    await client.stop(10_000);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
