/**
 * CPU per one-way message in one process: a sender and a receiver of one system exchanging N one-way
 * messages over real sockets (loopback TCP), sent as the bench's one-way workload sends them (256 per
 * event-loop turn, the next burst once all were admitted and the loop had a turn); a round ends when
 * the receiver has counted all N. The figure is `process.cpuUsage()` (user + system, every thread:
 * JavaScript's and zeromq's I/O threads) over the round, divided by N — the bench's "CPU µs/call,
 * client + server" without two processes' scheduling noise.
 *
 * Systems: `cs` (ClientServer), `mesh` (RouteMesh select-one), `node` (RouteMesh Node direct), each on a
 * bare ZLinkRuntime (no Nest: the handler is registered on the runtime), and `raw-framed` / `raw-batched`
 * (the bench's raw zeromq.js DEALER → ROUTER batched per turn, with and without the payload carried as
 * ZLink carries it).
 *
 * Usage (after `tsc -p tsconfig.bench.json`):
 *   node .bench-build/bench/send-overhead.js [--systems mesh,raw-framed] [--n 100000] [--rounds 6]
 *     [--marks] [--cpu-prof FILE | --alloc-prof FILE]
 * `--marks` and `--cpu-prof` as in call-overhead.js (bench/instructions.ts drives `--marks`); `--alloc-prof`
 * writes V8's sampling heap profile of the measured rounds (collected objects kept; bench/alloc-top.js reads it).
 */
import { Dealer, Router } from 'zeromq';
import { READY_MS, startPair } from './in-process.js';
import { PAYLOAD, packr } from './workload/payload.js';
import { SendQueue } from './workload/send-queue.js';
import { minAndMedian } from './workload/stats.js';
import { mark } from './marks.js';
import { type ProfileKind, startProfile, stopProfile } from './systems/profiler.js';
import { sendBurst } from './workload/workloads.js';

const SYSTEMS = ['cs', 'mesh', 'node', 'raw-framed', 'raw-batched'] as const;
type System = (typeof SYSTEMS)[number];
const BURST = 256;
/** Unmeasured messages per system before the rounds: enough for V8 to optimise the hot path. */
const WARM_UP = 8192;

/** One system's sender and receiver, in this process. */
interface Pair {
  /** Sends one message; a promise when it must be waited for before the next burst (admission). */
  send(): Promise<unknown> | undefined;
  /**
   * Resolves once the sender sees its receiver. Asked again after the start mark: a process frozen
   * longer than the peers' silence limit (callgrind zeroing its counts stops it for seconds) drops its
   * peer when it thaws, and the measured rounds must start on a ready peer, not on `NotFound`.
   */
  ready(): Promise<void>;
  /** Resolves once the receiver has counted `total` messages since it started. */
  received(total: number): Promise<void>;
  close(): Promise<void>;
}

/** A counter that wakes one waiter when it reaches the waiter's figure. */
class Counter {
  count = 0;
  private goal = Infinity;
  private wake: (() => void) | undefined;

  add(): void {
    if (++this.count >= this.goal) {
      this.goal = Infinity;
      this.wake?.();
    }
  }

  reach(total: number): Promise<void> {
    if (this.count >= total) return Promise.resolve();
    return new Promise((resolve) => {
      this.goal = total;
      this.wake = resolve;
    });
  }
}

async function zlinkPair(system: 'cs' | 'mesh' | 'node'): Promise<Pair> {
  const counter = new Counter();
  const handler = () => counter.add();
  const pair = await startPair(system === 'cs' ? 'cs' : 'mesh', (server) => {
    server.registerChannelHandler({
      channel: 'bench',
      kind: 'send',
      packet: 'ingest',
      handler,
      source: 'ingest',
    });
    if (system !== 'cs')
      server.registerNodeHandler({ mesh: 'game', kind: 'send', packet: 'ingest', handler, source: 'ingest' });
  });
  const { client } = pair;
  const route = client.routeClient;
  return {
    ready: () => client.waitForCandidates('bench', 1, READY_MS),
    send:
      system === 'node'
        ? () => route.sendToNode('game', 'server', 'ingest', PAYLOAD).async()
        : () => route.sendToChannel('bench', 'ingest', PAYLOAD).async(),
    received: (total) => counter.reach(total),
    close: () => pair.close(),
  };
}

/** The bench's raw system (bench/systems/raw-zmq-*.ts), one-way only, batched per turn. */
async function rawPair(framed: boolean): Promise<Pair> {
  const counter = new Counter();
  const router = new Router({ linger: 0 });
  await router.bind('tcp://127.0.0.1:*');
  const dealer = new Dealer({ linger: 0, sendTimeout: 200 });
  dealer.connect(router.lastEndpoint as string);
  const queue = new SendQueue(dealer, 'batched');
  const loop = (async () => {
    for await (const [, frame] of router)
      for (const record of packr.unpackMultiple(frame as Buffer) as unknown[]) {
        // Framed, the payload is decoded on its own, as ZLink's is (see bench/systems/raw-zmq-mode.ts).
        if (framed) packr.unpack((record as [number, Buffer])[1]);
        counter.add();
      }
  })();
  return {
    ready: () => Promise.resolve(),
    send: () => queue.push(packr.pack([0, framed ? packr.pack(PAYLOAD) : PAYLOAD])),
    received: (total) => counter.reach(total),
    async close() {
      queue.close();
      dealer.close();
      router.close();
      await loop;
    },
  };
}

function pairOf(system: System): Promise<Pair> {
  if (system === 'raw-framed' || system === 'raw-batched') return rawPair(system === 'raw-framed');
  return zlinkPair(system);
}

/** `n` one-way messages as the bench's one-way workload sends them; ns of CPU per message. */
async function round(pair: Pair, sentBefore: number, n: number): Promise<number> {
  const start = process.cpuUsage();
  const admissions: Promise<unknown>[] = [];
  for (let sent = 0; sent < n; sent += BURST) await sendBurst(pair.send, BURST, admissions);
  await pair.received(sentBefore + n);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / n;
}

function parse(argv: string[]) {
  const flag = (name: string, fallback: string) => {
    const at = argv.indexOf(name);
    return at >= 0 ? (argv[at + 1] as string) : fallback;
  };
  const systems = flag('--systems', 'mesh,raw-framed').split(',') as System[];
  for (const s of systems)
    if (!SYSTEMS.includes(s)) throw new Error(`unknown system ${s}: ${SYSTEMS.join('|')}`);
  const n = Math.ceil(Number(flag('--n', '100000')) / BURST) * BURST;
  const kind: ProfileKind | undefined = argv.includes('--cpu-prof')
    ? 'cpu'
    : argv.includes('--alloc-prof')
      ? 'alloc'
      : undefined;
  const profile = kind && { kind, file: flag(`--${kind}-prof`, '') };
  return { systems, n, rounds: Number(flag('--rounds', '6')), marks: argv.includes('--marks'), profile };
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const pairs = new Map<System, Pair>();
  const sent = new Map<System, number>();
  const perMessage = new Map<System, number[]>();
  try {
    for (const system of args.systems) {
      const pair = await pairOf(system);
      pairs.set(system, pair);
      await round(pair, 0, Math.min(args.n, WARM_UP)); // warm-up
      sent.set(system, Math.min(args.n, WARM_UP));
      perMessage.set(system, []);
    }
    if (args.marks) {
      await mark('measure:start');
      for (const pair of pairs.values()) await pair.ready();
    }
    if (args.profile) await startProfile(args.profile.kind);
    for (let r = 0; r < args.rounds; r++)
      for (const system of r % 2 === 0 ? args.systems : [...args.systems].reverse()) {
        const before = sent.get(system) as number;
        perMessage.get(system)!.push(await round(pairs.get(system)!, before, args.n));
        sent.set(system, before + args.n);
      }
    if (args.profile) await stopProfile(args.profile.file);
    if (args.marks) await mark('measure:end', { last: true });
  } finally {
    for (const pair of pairs.values()) await pair.close();
  }
  const result: Record<string, unknown> = { n: args.n, rounds: args.rounds };
  for (const [system, xs] of perMessage) {
    const { min, median } = minAndMedian(xs);
    result[system] = { minNsPerMessage: Math.round(min), medianNsPerMessage: Math.round(median) };
  }
  console.log(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
