/**
 * Sessions (issue 30 item 8): an object server with the player Actors, a gateway with the session
 * listeners, and a client process with the Node session client, on an object mesh through a private
 * `redis-server`. Side by side in one run: a request relayed through a session to its bound Actor and
 * back against the same request sent straight to the Actor with `toActor` from the gateway (both with
 * `depth` outstanding, each on an Actor of its own), one-way relay throughput, and the gateway's memory
 * per idle session (RSS before and after `idleSessions` sessions open, in a fresh gateway per kind).
 * The relayed and one-way runs and the memory are measured on each listener kind (issue 53),
 * interleaved in the same reps. Beside them, the floor: the same hop with
 * raw zeromq.js and no ZLink (bench/systems/raw-hop.ts), relayed and direct, so the ratio can be read
 * against what the extra process and TCP leg cost by themselves.
 */
import { join } from 'node:path';
import { startPrivateRedis } from '../sample/private-redis.js';
import { BenchChild } from './children.js';
import { log } from './log.js';
import {
  BENCH_SESSION_KINDS,
  type BenchSessionKind,
  type ThroughputResult,
} from './systems/zlink-sessions.js';

const STARTUP_TIMEOUT_MS = 60_000;
const STANDARD_REDIS = 'redis://127.0.0.1:6379';
const WARMUP_MS = 500;

/** One listener kind's figures (medians over the reps). */
export interface SessionsKindFigures {
  readonly relayedReqPerSec: number;
  readonly onewayMsgPerSec: number;
  readonly idleSessions: number;
  readonly rssPerSessionBytes: number;
}

export interface SessionsSection {
  readonly store: string;
  readonly depth: number;
  readonly reps: number;
  /** Per listener kind. */
  readonly kinds: Record<BenchSessionKind, SessionsKindFigures>;
  /** Medians over the reps. */
  readonly directReqPerSec: number;
  /** The same hop with raw zeromq.js (medians over the reps). */
  readonly rawRelayedPerSec: number;
  readonly rawDirectPerSec: number;
  readonly failed: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : (s[Math.floor(s.length / 2)] as number);
};

export async function runSessions(
  dir: string,
  repMs: number,
  reps: number,
  idleSessions = 10_000,
): Promise<SessionsSection | { error: string }> {
  const privateRedis = await startPrivateRedis();
  const url = privateRedis?.url ?? STANDARD_REDIS;
  const store = privateRedis ? `private redis-server (${url})` : `redis on ${url} (no redis-server on PATH)`;
  const env = { BENCH_REDIS_URL: url, BENCH_KEY_PREFIX: `zlink-bench-sessions-${process.pid}` };
  const children: BenchChild[] = [];
  const depth = 32;
  try {
    const server = new BenchChild('sessions server', join(dir, 'zlink-sessions-server.js'), { env });
    children.push(server);
    await server.next('ready', STARTUP_TIMEOUT_MS);
    const gateway = new BenchChild('sessions gateway', join(dir, 'zlink-sessions-gateway.js'), { env });
    children.push(gateway);
    const { ports } = (await gateway.next('ready', STARTUP_TIMEOUT_MS)) as unknown as {
      ports: Record<BenchSessionKind, number>;
    };
    const client = new BenchChild('sessions client', join(dir, 'zlink-sessions-client.js'), { env });
    children.push(client);
    await client.next('ready', STARTUP_TIMEOUT_MS);
    const raw = await startRawHop(dir, children);
    const relayed = perKind<number[]>(() => []);
    const oneway = perKind<number[]>(() => []);
    const direct: number[] = [];
    const rawRelayed: number[] = [];
    const rawDirect: number[] = [];
    let failed = 0;
    const relay = async (kind: BenchSessionKind, actor: string, ms: number, one: boolean) => {
      const port = ports[kind];
      client.command({ type: 'relay', port, actor, durationMs: ms, depth, oneway: one });
      return (await client.next('relay-result', ms + 60_000)).result as ThroughputResult;
    };
    // Unmeasured warm-up of every path (the JIT, the first sessions and routes), as the other sections do.
    for (const kind of BENCH_SESSION_KINDS) await relay(kind, `warm-up-${kind}`, WARMUP_MS, false);
    gateway.command({ type: 'direct', actor: 'warm-up-direct', durationMs: WARMUP_MS, depth });
    await gateway.next('direct-result', WARMUP_MS + 60_000);
    await raw.run('gateway', WARMUP_MS, depth);
    await raw.run('direct', WARMUP_MS, depth);
    for (let rep = 0; rep < reps; rep++) {
      // Interleaved, so a drift in the machine's load reaches every path alike; the kinds' order
      // alternates, so none always runs first.
      const order = rep % 2 === 0 ? BENCH_SESSION_KINDS : [...BENCH_SESSION_KINDS].reverse();
      const line: string[] = [];
      for (const kind of order) {
        const r = await relay(kind, `relayed-${kind}-${rep}`, repMs, false);
        const o = await relay(kind, `oneway-${kind}-${rep}`, repMs, true);
        relayed[kind].push(r.perSec);
        oneway[kind].push(o.perSec);
        failed += r.failed + o.failed;
        line.push(`${kind}: relayed ${Math.round(r.perSec)} req/s, one-way ${Math.round(o.perSec)} msg/s`);
      }
      gateway.command({ type: 'direct', actor: `direct-${rep}`, durationMs: repMs, depth });
      const d = (await gateway.next('direct-result', repMs + 60_000)).result as ThroughputResult;
      const rr = await raw.run('gateway', repMs, depth);
      const rd = await raw.run('direct', repMs, depth);
      direct.push(d.perSec);
      rawRelayed.push(rr.perSec);
      rawDirect.push(rd.perSec);
      failed += d.failed;
      log(
        `sessions rep ${rep + 1}/${reps}: ${line.join('; ')}; direct ${Math.round(d.perSec)} req/s; raw zeromq.js hop: relayed ${Math.round(rr.perSec)}, direct ${Math.round(rd.perSec)}`,
      );
    }
    const memory = perKind(() => ({ idleSessions: 0, rssPerSessionBytes: 0 }));
    for (const kind of BENCH_SESSION_KINDS)
      memory[kind] = await idleMemory(dir, env, kind, idleSessions, children);
    return {
      store,
      depth,
      reps,
      kinds: perKind((kind) => ({
        relayedReqPerSec: median(relayed[kind]),
        onewayMsgPerSec: median(oneway[kind]),
        ...memory[kind],
      })),
      directReqPerSec: median(direct),
      rawRelayedPerSec: median(rawRelayed),
      rawDirectPerSec: median(rawDirect),
      failed,
    };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    for (const child of children.reverse()) await child.stop(5000);
    await privateRedis?.stop();
  }
}

function perKind<T>(make: (kind: BenchSessionKind) => T): Record<BenchSessionKind, T> {
  return Object.fromEntries(BENCH_SESSION_KINDS.map((s) => [s, make(s)])) as Record<BenchSessionKind, T>;
}

/**
 * The gateway's RSS per idle session on one kind: a fresh gateway with that listener alone (so what
 * another kind's sessions left in the heap counts for none), RSS before and after a client of its own
 * opens `count` sessions. Both processes stop afterwards.
 */
async function idleMemory(
  dir: string,
  env: Record<string, string>,
  kind: BenchSessionKind,
  count: number,
  children: BenchChild[],
): Promise<{ idleSessions: number; rssPerSessionBytes: number }> {
  const gateway = new BenchChild(`idle gateway (${kind})`, join(dir, 'zlink-sessions-gateway.js'), {
    env: { ...env, BENCH_SESSION_KINDS: kind, BENCH_GATEWAY_RID: `bench-idle-gateway-${kind}` },
  });
  children.push(gateway);
  const client = new BenchChild(`idle client (${kind})`, join(dir, 'zlink-sessions-client.js'), { env });
  children.push(client);
  try {
    const { ports } = (await gateway.next('ready', STARTUP_TIMEOUT_MS)) as unknown as {
      ports: Record<BenchSessionKind, number>;
    };
    await client.next('ready', STARTUP_TIMEOUT_MS);
    gateway.command({ type: 'rss' });
    const before = (await gateway.next('rss', 30_000)).rss as number;
    client.command({ type: 'idle', port: ports[kind], count });
    await client.next('idle-open', 300_000);
    await new Promise((r) => setTimeout(r, 500));
    gateway.command({ type: 'rss' });
    const after = await gateway.next('rss', 30_000);
    const open = after.sessions as number;
    const rssPerSessionBytes = open > 0 ? ((after.rss as number) - before) / open : 0;
    log(
      `sessions on ${kind}: ${open} idle sessions, ${Math.round(rssPerSessionBytes)} bytes of gateway RSS each`,
    );
    return { idleSessions: open, rssPerSessionBytes };
  } finally {
    await client.stop(5000);
    await gateway.stop(5000);
  }
}

/** The raw zeromq.js hop's three processes (bench/systems/raw-hop.ts), started beside the ZLink ones. */
async function startRawHop(
  dir: string,
  children: BenchChild[],
): Promise<{ run(via: 'gateway' | 'direct', durationMs: number, depth: number): Promise<ThroughputResult> }> {
  const script = join(dir, 'raw-hop.js');
  const server = new BenchChild('raw hop server', script, { args: ['server'] });
  children.push(server);
  const serverEndpoint = (await server.next('ready', STARTUP_TIMEOUT_MS)).endpoint as string;
  const gateway = new BenchChild('raw hop gateway', script, { args: ['gateway', serverEndpoint] });
  children.push(gateway);
  const gatewayEndpoint = (await gateway.next('ready', STARTUP_TIMEOUT_MS)).endpoint as string;
  const client = new BenchChild('raw hop client', script, { args: ['client'] });
  children.push(client);
  await client.next('ready', STARTUP_TIMEOUT_MS);
  return {
    async run(via, durationMs, depth) {
      const endpoint = via === 'gateway' ? gatewayEndpoint : serverEndpoint;
      client.command({ type: 'hop', via, endpoint, durationMs, depth });
      return (await client.next('hop-result', durationMs + 60_000)).result as ThroughputResult;
    },
  };
}

/** The markdown of the section. */
export function sessionsMarkdown(r: SessionsSection | { error: string }): string[] {
  if ('error' in r) return [`**Sessions failed**: ${r.error.split('\n')[0]}`, ''];
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const rawRatio = r.rawDirectPerSec > 0 ? r.rawRelayedPerSec / r.rawDirectPerSec : 0;
  const target = (relayed: number) => {
    const ratio = r.directReqPerSec > 0 ? relayed / r.directReqPerSec : 0;
    return `${ratio.toFixed(2)}× (≥ 0.70× ${ratio >= 0.7 ? 'PASS' : 'FAIL'})`;
  };
  const kinds = BENCH_SESSION_KINDS.map((kind) => r.kinds[kind]);
  const row = (metric: string, cell: (f: SessionsKindFigures) => string) =>
    `| ${metric} | ${kinds.map(cell).join(' | ')} |`;
  return [
    '### Sessions',
    '',
    `An object server, a gateway with a session listener of each kind (${BENCH_SESSION_KINDS.join(', ')}) ` +
      `and a client process (${r.store}). Relayed: the Node session client keeps ${r.depth} ` +
      `requests outstanding through one session to its bound Actor (client → gateway → Actor and back); ` +
      `direct: the gateway keeps ${r.depth} outstanding on another Actor with \`toActor\`. Medians of ` +
      `${r.reps} reps after an unmeasured warm-up, every kind in every rep (their order alternating). ` +
      `Memory: the RSS growth of a fresh gateway per kind with ` +
      `${kinds.map((f) => n(f.idleSessions)).join(', ')} idle sessions open. Floor: the same hop with raw ` +
      `zeromq.js and no ZLink — a TCP client through a STREAM gateway to a ROUTER echo, against a DEALER ` +
      `straight to it, ${r.depth} outstanding, batched per turn — what the extra process and TCP leg cost ` +
      `by themselves.`,
    '',
    `| metric | ${BENCH_SESSION_KINDS.join(' | ')} |`,
    `| --- | ${BENCH_SESSION_KINDS.map(() => '---').join(' | ')} |`,
    row('relayed request, req/s', (f) => n(f.relayedReqPerSec)),
    row(`relayed ÷ direct \`toActor\` (${n(r.directReqPerSec)} req/s)`, (f) => target(f.relayedReqPerSec)),
    row('one-way relay, msg/s', (f) => n(f.onewayMsgPerSec)),
    row('gateway RSS per idle session, bytes', (f) => n(f.rssPerSessionBytes)),
    '',
    '| metric | value | target |',
    '| --- | --- | --- |',
    `| direct \`toActor\` request, req/s | ${n(r.directReqPerSec)} | |`,
    `| raw zeromq.js hop: relayed, direct, req/s | ${n(r.rawRelayedPerSec)}, ${n(r.rawDirectPerSec)} | |`,
    `| raw zeromq.js hop: relayed ÷ direct (the floor) | ${rawRatio.toFixed(2)}× | |`,
    `| calls failed | ${r.failed} | 0 |`,
    '',
  ];
}
