/**
 * CPU per request of the sessions bench's two paths, the gateway and the Actor's server in one
 * process, over real sockets: an object server holding `bench-player` Actors and a gateway (an object
 * client with a session listener of each kind); the game client, the bench's session peer
 * (bench/systems/zlink-sessions-client.ts), in a process of its own, as a player's would be.
 * `direct`: the gateway keeps `depth` requests outstanding on an Actor with `toActor`;
 * `relayed-<kind>`: the client keeps `depth` outstanding through a session bound to another Actor
 * (client → gateway → Actor and back). So both figures count the same two parts, gateway and server,
 * and their difference is what relaying through a session costs them. The figure is the minimum over
 * rounds of `process.cpuUsage()` ÷ N; with `--marks`, a driver counts instructions around the measured
 * rounds instead (bench/instructions.ts `--tool sessions`: valgrind does not follow the client, which
 * runs at full speed). Meant for before/after comparisons of the relayed path's hot code, not for the
 * table (`npm run bench -- --only sessions` is).
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/session-overhead.js [--target direct|relayed-tcp|relayed-tls|relayed-websocket]
 *     [--n 20000] [--rounds 6] [--depth 32] [--marks] [--cpu-prof FILE]
 * Without `--target`, every target's rounds, interleaved.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  MemoryLocationStore,
  ObjectClassRegistry,
  type SessionListenOptions,
  type ZLinkSessionContext,
  lifecycleHooksOf,
} from '../lib/index.js';
import type { ZLinkOptions } from '../lib/core/index.js';
import { ZLinkRuntime } from '../lib/runtime/index.js';
import { READY_MS, listen } from './in-process.js';
import { mark } from './marks.js';
import { minAndMedian } from './workload/stats.js';
import { PAYLOAD } from './workload/payload.js';
import { startProfile, stopProfile } from './systems/profiler.js';
import { BenchChild } from './children.js';
import {
  BENCH_PLAYER_TYPE,
  BENCH_SESSION_KINDS,
  type BenchSessionKind,
  type RelayCommand,
  benchListener,
  benchTls,
} from './systems/zlink-sessions.js';

const HERE = dirname(fileURLToPath(import.meta.url));

const TARGETS = ['direct', ...BENCH_SESSION_KINDS.map((k) => `relayed-${k}` as const)] as const;
type Target = (typeof TARGETS)[number];

interface Args {
  n: number;
  rounds: number;
  depth: number;
  targets: readonly Target[];
  marks: boolean;
  cpuProf: string | undefined;
}

function parse(argv: string[]): Args {
  const args: Args = { n: 20000, rounds: 6, depth: 32, targets: TARGETS, marks: false, cpuProf: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1] as string;
    if (flag === '--marks') {
      args.marks = true;
      continue;
    }
    i++;
    if (flag === '--n') args.n = Number(value);
    else if (flag === '--rounds') args.rounds = Number(value);
    else if (flag === '--depth') args.depth = Number(value);
    else if (flag === '--cpu-prof') args.cpuProf = value;
    else if (flag === '--target') {
      const targets = value.split(',') as Target[];
      for (const t of targets)
        if (!TARGETS.includes(t)) throw new Error(`--target: one of ${TARGETS.join(', ')}`);
      args.targets = targets;
    } else throw new Error(`unknown flag ${String(flag)}`);
  }
  return args;
}

/** The `bench-player` Actor type: `echo` answers its payload, as the bench server's does. */
function actorClasses(): ObjectClassRegistry {
  class BenchPlayer {
    echo(payload: unknown): unknown {
      return payload;
    }
  }
  const classes = new ObjectClassRegistry();
  classes.register({
    kind: 'actor',
    type: BENCH_PLAYER_TYPE,
    token: BenchPlayer,
    source: 'BenchPlayer',
    options: {},
    handlers: [{ packet: 'echo', kind: 'request', method: 'echo', source: 'BenchPlayer.echo' }],
    subscriptions: [],
    hooks: lifecycleHooksOf(BenchPlayer.prototype),
  });
  return classes;
}

function listenEntry(kind: BenchSessionKind): SessionListenOptions {
  if (kind === 'tls') {
    const { key, cert } = benchTls();
    return { ...listen, kind, tls: { key, cert } };
  }
  return kind === 'websocket' ? { ...listen, kind, path: '/bench' } : { ...listen, kind };
}

interface Pair {
  readonly gateway: ZLinkRuntime;
  readonly server: ZLinkRuntime;
  /** The game client's process. */
  readonly client: BenchChild;
}

/**
 * The object server and the gateway on one mesh (Memory store, auto discovery), and a peer per
 * relayed target, logged in (its session bound to an Actor of its own). `slow`: under valgrind, some
 * 50 times slower, where a lease refresh could wait past the default timings: a lease of minutes.
 */
async function start(args: Args): Promise<Pair> {
  const store = new MemoryLocationStore();
  const lease = args.marks
    ? { ttlMs: 600_000, refreshMs: 3000, refreshTimeoutMs: 300_000, marginMs: 1000 }
    : {};
  const mesh = (role: 'client' | 'server', rid: string): ZLinkOptions['meshes'] => ({
    objects: { rid, listen, objectRole: role, discovery: 'auto' },
  });
  const server = new ZLinkRuntime({
    locationStore: { instance: store, lease },
    meshes: mesh('server', 'server'),
  });
  server.registerObjectClasses(actorClasses());
  await server.start();
  const kinds = BENCH_SESSION_KINDS.filter((k) => args.targets.includes(`relayed-${k}`));
  const gateway = new ZLinkRuntime({
    locationStore: { instance: store, lease },
    meshes: mesh('client', 'gateway'),
    sessions: Object.fromEntries(
      kinds.map((kind) => [
        benchListener(kind),
        { mesh: 'objects', listen: listenEntry(kind), maxInFlight: 256, heartbeatMs: 600_000 },
      ]),
    ),
  });
  for (const kind of kinds)
    gateway.sessions.registerHandler({
      listener: benchListener(kind),
      kind: 'request',
      packet: 'login',
      source: 'login',
      handler: async (actor, ctx) => {
        const ref = await gateway.objects.getOrCreateActor(BENCH_PLAYER_TYPE, actor as string);
        await (ctx as ZLinkSessionContext).session.bind(ref);
        return ref.rid;
      },
    });
  await gateway.start();
  await gateway.waitForPeers('objects', 1, READY_MS);
  await gateway.objects.getOrCreateActor(BENCH_PLAYER_TYPE, 'direct');
  const client = new BenchChild('session client', join(HERE, 'systems', 'zlink-sessions-client.js'));
  await client.next('ready', READY_MS);
  return { gateway, server, client };
}

/** `n` requests of `target`, `depth` outstanding; this process's CPU ns per request. */
async function round(pair: Pair, target: Target, args: Args): Promise<number> {
  const start = process.cpuUsage();
  if (target === 'direct') {
    const actor = pair.gateway.routeClient.toActor('direct');
    let left = args.n;
    const lane = async (): Promise<void> => {
      while (left-- > 0) await actor.request('echo', PAYLOAD).async();
    };
    await Promise.all(Array.from({ length: args.depth }, lane));
  } else {
    const kind = target.slice('relayed-'.length) as BenchSessionKind;
    const command: RelayCommand = {
      type: 'relay',
      url: pair.gateway.sessions.localEndpoint(benchListener(kind)) as string,
      actor: target,
      durationMs: 0,
      depth: args.depth,
      oneway: false,
      requests: args.n,
      keep: true,
    };
    pair.client.command({ ...command });
    const { result } = await pair.client.next('relay-result', 3_600_000);
    if ((result as { failed: number }).failed > 0) throw new Error(`${target}: requests failed`);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / args.n;
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const pair = await start(args);
  try {
    const perOp: Partial<Record<Target, number[]>> = {};
    for (const target of args.targets) await round(pair, target, { ...args, n: Math.min(args.n, 5000) }); // warm-up
    if (args.marks) await mark('measure:start');
    if (args.cpuProf) await startProfile('cpu');
    for (let r = 0; r < args.rounds; r++)
      for (const target of r % 2 === 0 ? args.targets : [...args.targets].reverse())
        (perOp[target] ??= []).push(await round(pair, target, args));
    if (args.cpuProf) await stopProfile(args.cpuProf);
    if (args.marks) await mark('measure:end', { last: true });
    const result: Record<string, unknown> = { n: args.n, rounds: args.rounds, depth: args.depth };
    for (const target of args.targets) {
      const { min, median } = minAndMedian(perOp[target] as number[]);
      result[target] = { minNsPerOp: Math.round(min), medianNsPerOp: Math.round(median) };
    }
    const direct = perOp.direct;
    if (direct)
      for (const target of args.targets)
        if (target !== 'direct')
          result[`${target} ÷ direct`] = Number(
            (minAndMedian(perOp[target] as number[]).min / minAndMedian(direct).min).toFixed(3),
          );
    console.log(JSON.stringify(result));
  } finally {
    await pair.client.stop(5000);
    await pair.gateway.close();
    await pair.server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
