/**
 * A request's round trip with one in flight, in one process: a ZLink ClientServer client and server
 * (a bare ZLinkRuntime, no Nest) against the bench's raw zeromq.js DEALER → ROUTER sending one record
 * per `send()`, rounds interleaved; p50 of each round in µs. Between two processes on a small VM the
 * sequential p50 moves by a third from rep to rep (each request wakes four threads across two
 * processes); in one process the same threads are woken, the noise of two schedulers is gone, and what
 * remains between the two is ZLink's own work on the request's path.
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/sequential-overhead.js [--round-ms 400] [--rounds 8] [--idle-ms 0]
 * Each round is the bench's sequential workload (bench/workload/workloads.ts) for `--round-ms`; `--idle-ms` as
 * `npm run bench -- --idle-ms`: a sleep before each request, so that each one finds the threads idle.
 *
 * `--target zlink|mesh|raw|raw-mesh [--n 20000] [--marks]`: only that pair (`mesh`: two MeshNodes,
 * select-one; `raw-mesh`: raw zeromq.js ROUTER to ROUTER, the mesh's sockets),
 * `n` requests one after another after a warm-up, with `measure:start` / `measure:end` around them for
 * bench/instructions.ts (`--tool sequential`), which counts the instructions one request costs each
 * system, wake-ups aside.
 */
import { Dealer, Router } from 'zeromq';
import { registerEcho, startPair } from './in-process.js';
import { PAYLOAD, packr } from './workload/payload.js';
import { mark } from './marks.js';
import { median } from './workload/stats.js';
import { sequential } from './workload/workloads.js';

/** One request at a time to an echo server; resolves with the reply. */
type Call = () => Promise<unknown>;

/** A client and its echo server, ready for requests. */
interface Pair {
  call: Call;
  close(): Promise<void>;
}

async function zlinkPair(on: 'cs' | 'mesh' = 'cs'): Promise<Pair> {
  const pair = await startPair(on, registerEcho);
  const route = pair.client.routeClient;
  return { call: () => route.requestToChannel('bench', 'echo', PAYLOAD).async(), close: () => pair.close() };
}

/** A raw ROUTER answering every `[n, payload]` record with the same, one record per send, until closed. */
async function echoes(router: Router): Promise<void> {
  for await (const [id, body] of router) {
    const [n, payload] = packr.unpack(body as Buffer) as [number, unknown];
    await router.send([id as Buffer, packr.pack([n, payload])]);
  }
}

/** The bench's raw system with one record per send (bench/systems/raw-zmq-*.ts, `single`). */
async function rawPair(): Promise<Pair> {
  const router = new Router({ linger: 0 });
  await router.bind('tcp://127.0.0.1:*');
  const dealer = new Dealer({ linger: 0 });
  dealer.connect(router.lastEndpoint as string);
  const serve = echoes(router);
  let waiting: ((value: unknown) => void) | undefined;
  const replies = (async () => {
    for await (const [body] of dealer) waiting?.((packr.unpack(body as Buffer) as [number, unknown])[1]);
  })();
  let next = 0;
  return {
    call: () =>
      new Promise((resolve) => {
        waiting = resolve;
        void dealer.send(packr.pack([++next, PAYLOAD]));
      }),
    async close() {
      dealer.close();
      router.close();
      await Promise.allSettled([serve, replies]);
    },
  };
}

/**
 * Raw zeromq.js in the MeshNode's shape: ROUTER to ROUTER, each frame addressed by the peer's routing
 * id, one record per send. What zeromq.js and libzmq cost a mesh request (a second frame each way on the
 * caller's side), so that a MeshNode's count over this one is ZLink's own work.
 */
async function rawMeshPair(): Promise<Pair> {
  const server = new Router({ linger: 0, routingId: 'server' });
  await server.bind('tcp://127.0.0.1:*');
  const client = new Router({ linger: 0, routingId: 'client', mandatory: true });
  client.connect(server.lastEndpoint as string);
  const serverId = Buffer.from('server');
  const serve = echoes(server);
  let waiting: ((value: unknown) => void) | undefined;
  const replies = (async () => {
    for await (const [, body] of client) waiting?.((packr.unpack(body as Buffer) as [number, unknown])[1]);
  })();
  let next = 0;
  const call = () =>
    new Promise((resolve, reject) => {
      waiting = resolve;
      client.send([serverId, packr.pack([++next, PAYLOAD])]).catch(reject);
    });
  // Until the handshake has told the client the server's routing id, a send to it fails (`mandatory`).
  for (;;) {
    try {
      await call();
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  return {
    call,
    async close() {
      client.close();
      server.close();
      await Promise.allSettled([serve, replies]);
    },
  };
}

/** The p50 round trip of one round, in µs. */
async function p50(call: Call, roundMs: number, idleMs = 0): Promise<number> {
  return (await sequential({ request: call }, roundMs, idleMs)).p50Us;
}

/** Requests before the counted ones: enough for V8 to optimise both paths. */
const WARM_UP = 8192;

/** `n` requests one after another, between marks when `marks`. */
async function counted(target: string, n: number, marks: boolean): Promise<void> {
  const pairs: Record<string, () => Promise<Pair>> = {
    zlink: () => zlinkPair('cs'),
    mesh: () => zlinkPair('mesh'),
    raw: rawPair,
    'raw-mesh': rawMeshPair,
  };
  const start = pairs[target];
  if (!start) throw new Error(`--target must be ${Object.keys(pairs).join(', ')}`);
  const pair = await start();
  try {
    for (let i = 0; i < WARM_UP; i++) await pair.call();
    if (marks) await mark('measure:start');
    for (let i = 0; i < n; i++) await pair.call();
    if (marks) await mark('measure:end', { last: true });
  } finally {
    await pair.close();
  }
  console.log(JSON.stringify({ target, n }));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const target = argv.indexOf('--target');
  if (target >= 0) {
    const n = argv.indexOf('--n');
    return counted(
      argv[target + 1] as string,
      n >= 0 ? Number(argv[n + 1]) : 20_000,
      argv.includes('--marks'),
    );
  }
  const flag = (name: string, fallback: string) => {
    const at = argv.indexOf(name);
    return Number(at >= 0 ? argv[at + 1] : fallback);
  };
  const roundMs = flag('--round-ms', '400');
  const rounds = flag('--rounds', '8');
  const idleMs = flag('--idle-ms', '0');
  const pairs = { zlink: await zlinkPair(), raw: await rawPair() };
  try {
    for (const pair of Object.values(pairs)) await p50(pair.call, roundMs); // warm-up
    const rows: Record<keyof typeof pairs, number[]> = { zlink: [], raw: [] };
    for (let r = 0; r < rounds; r++)
      for (const name of r % 2 === 0 ? (['zlink', 'raw'] as const) : (['raw', 'zlink'] as const))
        rows[name].push(await p50(pairs[name].call, roundMs, idleMs));
    console.log(
      JSON.stringify({
        roundMs,
        rounds,
        idleMs,
        p50Us: { zlink: rows.zlink.map((x) => Math.round(x)), raw: rows.raw.map((x) => Math.round(x)) },
        zlinkOverRaw: Number((median(rows.zlink) / median(rows.raw)).toFixed(3)),
      }),
    );
  } finally {
    for (const pair of Object.values(pairs)) await pair.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
