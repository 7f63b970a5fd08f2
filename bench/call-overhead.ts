/**
 * CPU per request in one process: a ZLinkRuntime client and server (ClientServer and RouteMesh)
 * exchanging N pipelined requests over real sockets; the figure is the minimum over rounds of
 * `process.cpuUsage()` (user + system) divided by N. Meant for before/after comparisons of small
 * hot-path changes (e.g. trace propagation), not for the README table (`npm run bench` is).
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/call-overhead.js [--route cs|mesh] [--n 20000] [--rounds 12]
 *     [--window 500] [--tracing auto|off] [--otel none|loaded|registered|active]
 * `--otel loaded` only imports `@opentelemetry/api`; `registered` registers the async-hooks context manager and the W3C propagator globally;
 * `active` also makes every call inside an active span context (traced calls).
 */
import { ZLinkRuntime } from '../lib/runtime/index.js';
import type { ZLinkOptions } from '../lib/core/index.js';

interface Args {
  route: 'cs' | 'mesh';
  n: number;
  rounds: number;
  window: number;
  tracing: string | undefined;
  otel: 'none' | 'loaded' | 'registered' | 'active';
}

function parse(argv: string[]): Args {
  const args: Args = { route: 'cs', n: 20000, rounds: 12, window: 500, tracing: undefined, otel: 'none' };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1] as string];
    if (flag === '--route') args.route = value as Args['route'];
    else if (flag === '--n') args.n = Number(value);
    else if (flag === '--rounds') args.rounds = Number(value);
    else if (flag === '--window') args.window = Number(value);
    else if (flag === '--tracing') args.tracing = value;
    else if (flag === '--otel') args.otel = value as Args['otel'];
    else throw new Error(`unknown flag ${String(flag)}`);
  }
  return args;
}

const listen = { port: 0, bindHost: '127.0.0.1' };

async function runtimes(args: Args): Promise<{ client: ZLinkRuntime; server: ZLinkRuntime }> {
  const extra = (args.tracing === undefined ? {} : { tracing: args.tracing }) as ZLinkOptions;
  const handler = (m: unknown) => m;
  if (args.route === 'cs') {
    const server = new ZLinkRuntime({ ...extra, clientServer: { bench: { server: { listen } } } });
    server.registerChannelHandler({
      channel: 'bench',
      kind: 'request',
      packet: 'echo',
      handler,
      source: 'echo',
    });
    await server.start();
    const endpoint = server.endpoint('bench') as string;
    const client = new ZLinkRuntime({
      ...extra,
      clientServer: { bench: { client: { connect: [endpoint] } } },
    });
    await client.start();
    await client.waitForCandidates('bench', 1, 5000);
    return { client, server };
  }
  const server = new ZLinkRuntime({
    ...extra,
    meshes: { game: { rid: 'server', listen, channels: { bench: { role: 'server' } } } },
  });
  server.registerChannelHandler({
    channel: 'bench',
    kind: 'request',
    packet: 'echo',
    handler,
    source: 'echo',
  });
  await server.start();
  const client = new ZLinkRuntime({
    ...extra,
    meshes: {
      game: {
        rid: 'client',
        listen,
        peers: [{ endpoint: server.meshEndpoint('game') as string }],
        channels: { bench: { role: 'client' } },
      },
    },
  });
  await client.start();
  await client.waitForCandidates('bench', 1, 5000);
  return { client, server };
}

async function round(client: ZLinkRuntime, args: Args): Promise<number> {
  const route = client.routeClient;
  const message = { n: 1, s: 'x' };
  const start = process.cpuUsage();
  for (let done = 0; done < args.n; done += args.window) {
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < args.window; i++)
      calls.push(route.requestToChannel('bench', 'echo', message).async());
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
  const { client, server } = await runtimes(args);
  try {
    const perOp: number[] = [];
    await inSpan(() => round(client, { ...args, n: Math.min(args.n, 5000) })); // warm-up
    for (let r = 0; r < args.rounds; r++) perOp.push(await inSpan(() => round(client, args)));
    const sorted = [...perOp].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    console.log(
      JSON.stringify({
        route: args.route,
        tracing: args.tracing ?? '(default)',
        otel: args.otel,
        n: args.n,
        rounds: args.rounds,
        minNsPerOp: Math.round(sorted[0] as number),
        medianNsPerOp: Math.round(median),
      }),
    );
  } finally {
    await client.close();
    await server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
