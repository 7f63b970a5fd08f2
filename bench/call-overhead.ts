/**
 * CPU per request in one process: a ZLinkRuntime client and server (ClientServer and RouteMesh)
 * exchanging N pipelined requests over real sockets; the figure is the minimum over rounds of
 * `process.cpuUsage()` (user + system) divided by N. Meant for before/after comparisons of small
 * hot-path changes (e.g. trace propagation), not for the table in docs/performance.md (`npm run bench` is).
 *
 * `--route objects`: a Spot on a cached route and ChannelName select-one on one object mesh (a
 * Memory Location Store, 256 Spots called in turn, as the objects bench does), their rounds interleaved;
 * it prints both figures and their ratio (the objects bench's CPU target, without its two processes'
 * scheduling noise).
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/call-overhead.js [--route cs|mesh|objects] [--n 20000] [--rounds 12]
 *     [--window 500] [--tracing auto|off] [--otel none|loaded|registered|active]
 * `--otel loaded` only imports `@opentelemetry/api`; `registered` registers the async-hooks context manager and the W3C propagator globally;
 * `active` also makes every call inside an active span context (traced calls).
 */
import { ZLinkRuntime } from '../lib/runtime/index.js';
import type { ZLinkOptions } from '../lib/core/index.js';
import { MemoryLocationStore, ObjectClassRegistry, lifecycleHooksOf } from '../lib/index.js';
import { READY_MS, type RuntimePair, listen, registerEcho, startPair } from './in-process.js';
import { mark } from './marks.js';
import { minAndMedian } from './workload/stats.js';
import { PAYLOAD } from './workload/payload.js';
import { startProfile, stopProfile } from './systems/profiler.js';
import { BENCH_SPOTS, BENCH_SPOT_TYPE, spotId } from './systems/zlink-objects.js';

interface Args {
  route: 'cs' | 'mesh' | 'objects';
  n: number;
  rounds: number;
  window: number;
  tracing: string | undefined;
  otel: 'none' | 'loaded' | 'registered' | 'active';
  /** `--route objects` only: run this target's rounds alone (a process to count instructions of). */
  target: 'channel' | 'spot' | undefined;
  /**
   * `--marks`: around the measured rounds, print `measure:start` / `measure:end` and wait for a line on
   * stdin after each, so a driver (bench/instructions.ts) reads a counter exactly around them.
   */
  marks: boolean;
  /** `--cpu-prof FILE`: a V8 CPU profile of the measured rounds only (set-up and warm-up left out). */
  cpuProf: string | undefined;
}

function parse(argv: string[]): Args {
  const args: Args = {
    route: 'cs',
    n: 20000,
    rounds: 12,
    window: 500,
    tracing: undefined,
    otel: 'none',
    target: undefined,
    marks: false,
    cpuProf: undefined,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1] as string];
    if (flag === '--marks') {
      args.marks = true;
      i--;
      continue;
    }
    if (flag === '--route') args.route = value as Args['route'];
    else if (flag === '--n') args.n = Number(value);
    else if (flag === '--rounds') args.rounds = Number(value);
    else if (flag === '--window') args.window = Number(value);
    else if (flag === '--tracing') args.tracing = value;
    else if (flag === '--otel') args.otel = value as Args['otel'];
    else if (flag === '--target') args.target = value as Args['target'];
    else if (flag === '--cpu-prof') args.cpuProf = value;
    else throw new Error(`unknown flag ${String(flag)}`);
  }
  return args;
}

async function runtimes(args: Args): Promise<RuntimePair> {
  const extra = (args.tracing === undefined ? {} : { tracing: args.tracing }) as Partial<ZLinkOptions>;
  return startPair(args.route === 'cs' ? 'cs' : 'mesh', registerEcho, extra);
}

/** The `bench` Spot type: `echo` answers its payload, as the channel's handler does. */
function spotClasses(): ObjectClassRegistry {
  class BenchSpot {
    echo(payload: unknown): unknown {
      return payload;
    }
  }
  const classes = new ObjectClassRegistry();
  classes.register({
    kind: 'spot',
    type: BENCH_SPOT_TYPE,
    token: BenchSpot,
    source: 'BenchSpot',
    options: {},
    handlers: [{ packet: 'echo', kind: 'request', method: 'echo', source: 'BenchSpot.echo' }],
    subscriptions: [],
    hooks: lifecycleHooksOf(BenchSpot.prototype),
  });
  return classes;
}

/**
 * An object server (Spots `bench`, channel `bench`) and an object client on one mesh, auto discovery.
 * `slow`: the process runs under valgrind, some 50 times slower, where a lease refresh can wait past the
 * default timings and fence the owner mid-run: a lease of minutes instead.
 */
async function objectRuntimes(slow: boolean): Promise<{ client: ZLinkRuntime; server: ZLinkRuntime }> {
  const store = new MemoryLocationStore();
  const lease = slow ? { ttlMs: 600_000, refreshMs: 3000, refreshTimeoutMs: 300_000, marginMs: 1000 } : {};
  const options = (role: 'client' | 'server', rid: string): ZLinkOptions => ({
    locationStore: { instance: store, lease },
    meshes: {
      objects: { rid, listen, objectRole: role, discovery: 'auto', channels: { bench: { role } } },
    },
  });
  const server = new ZLinkRuntime(options('server', 'server'));
  server.registerObjectClasses(spotClasses());
  registerEcho(server);
  await server.start();
  const client = new ZLinkRuntime(options('client', 'client'));
  await client.start();
  await client.waitForCandidates('bench', 1, READY_MS);
  for (const id of spotIds) await client.objects.getOrCreateSpot(BENCH_SPOT_TYPE, id);
  return { client, server };
}

type Target = 'channel' | 'spot';
const spotIds = Array.from({ length: BENCH_SPOTS }, (_, i) => spotId(i));

async function round(client: ZLinkRuntime, args: Args, target: Target = 'channel'): Promise<number> {
  const route = client.routeClient;
  // The objects bench's payload for the objects pair; the small one the other routes have always used.
  const message = args.route === 'objects' ? PAYLOAD : { n: 1, s: 'x' };
  let next = 0;
  const call =
    target === 'channel'
      ? () => route.requestToChannel('bench', 'echo', message).async()
      : () =>
          route
            .toSpot(spotIds[next++ % BENCH_SPOTS] as string)
            .request('echo', message)
            .async();
  const start = process.cpuUsage();
  for (let done = 0; done < args.n; done += args.window) {
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < args.window; i++) calls.push(call());
    await Promise.all(calls);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / args.n; // ns per request
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  let inSpan: <T>(fn: () => T) => T = (fn) => fn();
  if (args.otel === 'loaded') await import('@opentelemetry/api');
  else if (args.otel !== 'none') {
    const api = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    if (args.otel === 'active') {
      const span = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
      inSpan = (fn) => api.context.with(api.trace.setSpanContext(api.context.active(), span), fn);
    }
  }
  if (args.route === 'objects') return objects(args);
  const pair = await runtimes(args);
  const { client } = pair;
  try {
    const perOp: number[] = [];
    await inSpan(() => round(client, { ...args, n: Math.min(args.n, 5000) })); // warm-up
    for (let r = 0; r < args.rounds; r++) perOp.push(await inSpan(() => round(client, args)));
    const { min, median } = minAndMedian(perOp);
    console.log(
      JSON.stringify({
        route: args.route,
        tracing: args.tracing ?? '(default)',
        otel: args.otel,
        n: args.n,
        rounds: args.rounds,
        minNsPerOp: Math.round(min),
        medianNsPerOp: Math.round(median),
      }),
    );
  } finally {
    await pair.close();
  }
}

/** Both targets' rounds interleaved on one pair of runtimes; min and median ns per request of each. */
async function objects(args: Args): Promise<void> {
  const { client, server } = await objectRuntimes(args.marks);
  try {
    const perOp: Record<Target, number[]> = { channel: [], spot: [] };
    const both: readonly Target[] = args.target ? [args.target] : ['channel', 'spot'];
    for (const target of both) await round(client, { ...args, n: Math.min(args.n, 5000) }, target); // warm-up
    if (args.marks) await mark('measure:start');
    if (args.cpuProf) await startProfile('cpu');
    for (let r = 0; r < args.rounds; r++)
      for (const target of r % 2 === 0 ? both : [...both].reverse())
        perOp[target].push(await round(client, args, target));
    if (args.cpuProf) await stopProfile(args.cpuProf);
    if (args.marks) await mark('measure:end', { last: true });
    const result: Record<string, unknown> = { route: 'objects', n: args.n, rounds: args.rounds };
    for (const target of both) {
      const { min, median } = minAndMedian(perOp[target]);
      result[target] = { minNsPerOp: Math.round(min), medianNsPerOp: Math.round(median) };
    }
    if (both.length === 2) {
      const channel = minAndMedian(perOp.channel);
      const spot = minAndMedian(perOp.spot);
      result.spotOverChannelMin = Number((spot.min / channel.min).toFixed(3));
      result.spotOverChannelMedian = Number((spot.median / channel.median).toFixed(3));
    }
    console.log(JSON.stringify(result));
  } finally {
    await client.close();
    await server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
