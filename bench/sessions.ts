/**
 * Sessions (issue 30 item 8, issue 53 item 9): an object server with the player Actors, a gateway with a
 * session listener of each kind (`tcp`, `tls`, `websocket`), and a client process with the bench's
 * session peer (bench/systems/session-peer.ts), on an object mesh through a private `redis-server`.
 * Side by side in one run, each kind in every rep (their order alternating): a request relayed through
 * a session to its bound Actor and back against the same request sent straight to the Actor with
 * `toActor` from the gateway (both with `depth` outstanding, each on an Actor of its own), one-way relay
 * throughput, sessions accepted per second (a burst of clients connecting at once: connect, TLS or
 * upgrade, Hello, Welcome), and the resume time (a resumable session drops, the gateway pushes to it
 * while it is away, it resumes: from the new connection to that push). Then the gateway's memory per
 * idle session (RSS before and after each count of idle sessions, a fresh gateway per kind and count).
 * Beside them, the floor: the same hop with raw zeromq.js and no ZLink (bench/systems/raw-hop.ts),
 * relayed and direct, so the ratio can be read against what the extra process and TCP leg cost by
 * themselves.
 */
import { readFileSync } from 'node:fs';
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
/** Sessions opened per accept measurement, this many connecting at once. */
const ACCEPT_COUNT = 500;
const ACCEPT_QUICK_COUNT = 200;
const ACCEPT_CONCURRENCY = 100;
/** Resumes per kind and rep, each away this long before it comes back. */
const RESUME_TRIES = 5;
const RESUME_AWAY_MS = 20;
/** Idle sessions one client process holds (each is an open file; the limit is per process). */
const IDLE_PER_CLIENT = 15_000;
/** Open files a gateway needs beside its sessions' sockets. */
const FILES_BESIDE_SESSIONS = 1000;
/**
 * The idle sessions' local addresses: every 127.0.0.x is loopback on Linux, and each has its own
 * ephemeral ports (28k by default), so 50,000 connections to one listener fit.
 */
const IDLE_SOURCES = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];

/** Targets the table shows (issue 53 item 9). */
export const SESSIONS_TARGETS = { relayedRatio: 0.7, rssPerSessionBytes: 8 * 1024 } as const;

/** One count of idle sessions on one kind: what the gateway's RSS grew by per session, or why not run. */
export interface IdleMemory {
  /** Sessions asked for. */
  readonly count: number;
  /** Sessions open when the RSS was read. */
  readonly idleSessions: number;
  readonly rssPerSessionBytes: number;
  /** How fast they opened (`concurrency` 256 at once, from a fresh gateway). */
  readonly openPerSec: number;
  /** Set when the count was not run (the open-file limit). */
  readonly skipped?: string;
}

/** One listener kind's figures (medians over the reps). */
export interface SessionsKindFigures {
  readonly relayedReqPerSec: number;
  readonly onewayMsgPerSec: number;
  readonly acceptsPerSec: number;
  /** Resume: from the new connection's start to the held push's arrival, ms; median and slowest. */
  readonly resumeMs: number;
  readonly resumeMaxMs: number;
  readonly resumes: number;
  readonly memory: readonly IdleMemory[];
}

export interface SessionsSection {
  readonly store: string;
  readonly depth: number;
  readonly reps: number;
  readonly acceptCount: number;
  readonly acceptConcurrency: number;
  readonly resumeAwayMs: number;
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

export interface SessionsSettings {
  readonly repMs: number;
  readonly reps: number;
  /** Idle sessions per kind for the memory figure, one fresh gateway per count. */
  readonly idleCounts: readonly number[];
  readonly quick: boolean;
}

export async function runSessions(
  dir: string,
  settings: SessionsSettings,
): Promise<SessionsSection | { error: string }> {
  const { repMs, reps, idleCounts, quick } = settings;
  const privateRedis = await startPrivateRedis();
  const url = privateRedis?.url ?? STANDARD_REDIS;
  const store = privateRedis ? `private redis-server (${url})` : `redis on ${url} (no redis-server on PATH)`;
  const env = { BENCH_REDIS_URL: url, BENCH_KEY_PREFIX: `zlink-bench-sessions-${process.pid}` };
  const children: BenchChild[] = [];
  const depth = 32;
  const acceptCount = quick ? ACCEPT_QUICK_COUNT : ACCEPT_COUNT;
  try {
    const server = new BenchChild('sessions server', join(dir, 'zlink-sessions-server.js'), { env });
    children.push(server);
    await server.next('ready', STARTUP_TIMEOUT_MS);
    const gateway = new BenchChild('sessions gateway', join(dir, 'zlink-sessions-gateway.js'), { env });
    children.push(gateway);
    const { endpoints } = (await gateway.next('ready', STARTUP_TIMEOUT_MS)) as unknown as {
      endpoints: Record<BenchSessionKind, string>;
    };
    const client = new BenchChild('sessions client', join(dir, 'zlink-sessions-client.js'), { env });
    children.push(client);
    await client.next('ready', STARTUP_TIMEOUT_MS);
    const raw = await startRawHop(dir, children);
    const relayed = perKind<number[]>(() => []);
    const oneway = perKind<number[]>(() => []);
    const accepts = perKind<number[]>(() => []);
    const resumes = perKind<number[]>(() => []);
    const direct: number[] = [];
    const rawRelayed: number[] = [];
    const rawDirect: number[] = [];
    let failed = 0;
    const relay = async (kind: BenchSessionKind, actor: string, ms: number, one: boolean) => {
      client.command({ type: 'relay', url: endpoints[kind], actor, durationMs: ms, depth, oneway: one });
      return (await client.next('relay-result', ms + 60_000)).result as ThroughputResult;
    };
    const accept = async (kind: BenchSessionKind, count: number) => {
      client.command({ type: 'accept', url: endpoints[kind], count, concurrency: ACCEPT_CONCURRENCY });
      return (await client.next('accept-result', 120_000)).result as ThroughputResult;
    };
    const resume = async (kind: BenchSessionKind, tries: number) => {
      client.command({ type: 'resume', url: endpoints[kind], tries, awayMs: RESUME_AWAY_MS });
      return (await client.next('resume-result', 60_000)).result as { ms: number[]; failed: number };
    };
    // Unmeasured warm-up of every path (the JIT, the first sessions and routes), as the other sections do.
    for (const kind of BENCH_SESSION_KINDS) {
      await relay(kind, `warm-up-${kind}`, WARMUP_MS, false);
      await accept(kind, ACCEPT_CONCURRENCY);
      await resume(kind, 2);
    }
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
        const a = await accept(kind, acceptCount);
        const m = await resume(kind, RESUME_TRIES);
        relayed[kind].push(r.perSec);
        oneway[kind].push(o.perSec);
        accepts[kind].push(a.perSec);
        resumes[kind].push(...m.ms);
        failed += r.failed + o.failed + a.failed + m.failed;
        line.push(
          `${kind}: relayed ${Math.round(r.perSec)} req/s, one-way ${Math.round(o.perSec)} msg/s, ` +
            `${Math.round(a.perSec)} accepts/s, resume ${median(m.ms).toFixed(2)} ms`,
        );
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
    // The measuring processes go first (the object server stays, for the idle gateways' mesh): the
    // idle gateways want the cores to themselves.
    for (const child of children.splice(1).reverse()) await child.stop(5000);
    const memory = perKind<IdleMemory[]>(() => []);
    for (const count of idleCounts)
      for (const kind of BENCH_SESSION_KINDS) memory[kind].push(await idleMemory(dir, env, kind, count));
    return {
      store,
      depth,
      reps,
      acceptCount,
      acceptConcurrency: ACCEPT_CONCURRENCY,
      resumeAwayMs: RESUME_AWAY_MS,
      kinds: perKind((kind) => ({
        relayedReqPerSec: median(relayed[kind]),
        onewayMsgPerSec: median(oneway[kind]),
        acceptsPerSec: median(accepts[kind]),
        resumeMs: median(resumes[kind]),
        resumeMaxMs: Math.max(0, ...resumes[kind]),
        resumes: resumes[kind].length,
        memory: memory[kind],
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
 * The most files a process may open (the hard `RLIMIT_NOFILE`: Node raises its soft limit to it at
 * startup, and only a privileged process may raise the hard one); `undefined` where /proc does not say.
 */
export function openFileLimit(limits = '/proc/self/limits'): number | undefined {
  try {
    const line = readFileSync(limits, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const hard = line?.split(/\s+/)[4];
    if (hard === 'unlimited') return Number.POSITIVE_INFINITY;
    return hard === undefined ? undefined : Number(hard);
  } catch {
    return undefined;
  }
}

/**
 * The gateway's RSS per idle session on one kind: a fresh gateway with that listener alone (so what
 * another kind's sessions left in the heap counts for none), RSS before and after its clients open
 * `count` sessions (no more than `IDLE_PER_CLIENT` per client process, from several loopback
 * addresses). Every process stops afterwards, the gateway first (the connections' TIME_WAIT then lands
 * on its side, not on the clients' ephemeral ports). A count the gateway cannot hold open (the
 * open-file limit) is not run, and says so.
 */
async function idleMemory(
  dir: string,
  env: Record<string, string>,
  kind: BenchSessionKind,
  count: number,
): Promise<IdleMemory> {
  const limit = openFileLimit();
  if (limit !== undefined && count + FILES_BESIDE_SESSIONS > limit) {
    const skipped = `not run: ${count.toLocaleString('en-US')} sessions need ${count + FILES_BESIDE_SESSIONS} open files in the gateway, the limit here is ${limit} (ulimit -Hn)`;
    log(`sessions on ${kind}: ${skipped}`);
    return { count, idleSessions: 0, rssPerSessionBytes: 0, openPerSec: 0, skipped };
  }
  const gateway = new BenchChild(`idle gateway (${kind})`, join(dir, 'zlink-sessions-gateway.js'), {
    env: { ...env, BENCH_SESSION_KINDS: kind, BENCH_GATEWAY_RID: `bench-idle-gateway-${kind}-${count}` },
    execArgv: ['--expose-gc'],
  });
  const clients = Array.from(
    { length: Math.ceil(count / IDLE_PER_CLIENT) },
    (_, i) =>
      new BenchChild(`idle client ${i + 1} (${kind})`, join(dir, 'zlink-sessions-client.js'), { env }),
  );
  try {
    const { endpoints } = (await gateway.next('ready', STARTUP_TIMEOUT_MS)) as unknown as {
      endpoints: Record<BenchSessionKind, string>;
    };
    for (const client of clients) await client.next('ready', STARTUP_TIMEOUT_MS);
    gateway.command({ type: 'rss' });
    const before = (await gateway.next('rss', 30_000)).rss as number;
    const t0 = performance.now();
    let left = count;
    const opened = clients.map((client, i) => {
      const share = Math.ceil(left / (clients.length - i));
      left -= share;
      // Each client its own addresses, so no two compete for one address's ports.
      const sources = IDLE_SOURCES.filter((_, s) => s % clients.length === i % IDLE_SOURCES.length);
      client.command({
        type: 'idle',
        url: endpoints[kind],
        count: share,
        sources: sources.length > 0 ? sources : IDLE_SOURCES,
      });
      return client.next('idle-open', 600_000);
    });
    await Promise.all(opened);
    const openPerSec = (count * 1000) / (performance.now() - t0);
    await new Promise((r) => setTimeout(r, 500));
    gateway.command({ type: 'rss' });
    const after = await gateway.next('rss', 30_000);
    const open = after.sessions as number;
    const rssPerSessionBytes = open > 0 ? ((after.rss as number) - before) / open : 0;
    log(
      `sessions on ${kind}: ${open} idle sessions, ${Math.round(rssPerSessionBytes)} bytes of gateway RSS each (opened at ${Math.round(openPerSec)}/s)`,
    );
    return { count, idleSessions: open, rssPerSessionBytes, openPerSec };
  } finally {
    await gateway.stop(10_000);
    for (const client of clients) await client.stop(10_000);
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

/** The markdown of the section: a column per kind, the targets beside. */
export function sessionsMarkdown(r: SessionsSection | { error: string }): string[] {
  if ('error' in r) return [`**Sessions failed**: ${r.error.split('\n')[0]}`, ''];
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const rawRatio = r.rawDirectPerSec > 0 ? r.rawRelayedPerSec / r.rawDirectPerSec : 0;
  const ratioOf = (relayed: number) => (r.directReqPerSec > 0 ? relayed / r.directReqPerSec : 0);
  const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  const kinds = BENCH_SESSION_KINDS.map((kind) => r.kinds[kind]);
  const row = (metric: string, cell: (f: SessionsKindFigures) => string, target = '') =>
    `| ${metric} | ${kinds.map(cell).join(' | ')} | ${target} |`;
  const counts = kinds[0]?.memory.map((m) => m.count) ?? [];
  const memoryRows = counts.map((count, i) =>
    row(
      `gateway RSS per idle session at ${n(count)}, bytes`,
      (f) => {
        const m = f.memory[i];
        if (m === undefined) return '';
        if (m.skipped !== undefined) return 'not run';
        return `${n(m.rssPerSessionBytes)} (${pass(m.rssPerSessionBytes <= SESSIONS_TARGETS.rssPerSessionBytes)})`;
      },
      `≤ ${n(SESSIONS_TARGETS.rssPerSessionBytes)}`,
    ),
  );
  const skipped = kinds.flatMap((f) => f.memory.filter((m) => m.skipped).map((m) => m.skipped as string));
  return [
    '### Sessions',
    '',
    `An object server, a gateway with a session listener of each kind (${BENCH_SESSION_KINDS.join(', ')}; ` +
      `TLS with the test certificate, RSA 2048) and a client process with the bench's session peer ` +
      `(${r.store}). Relayed: the client keeps ${r.depth} requests outstanding through one session to its ` +
      `bound Actor (client → gateway → Actor and back); direct: the gateway keeps ${r.depth} outstanding on ` +
      `another Actor with \`toActor\`. Accepts: ${n(r.acceptCount)} clients open a session, ` +
      `${r.acceptConcurrency} at once (connect, TLS handshake or WebSocket upgrade, Hello, Welcome). ` +
      `Resume: a resumable session drops its connection, the gateway pushes to it as it sees the drop, ` +
      `the client comes back ${r.resumeAwayMs} ms later: from its new connection to that push. Medians of ` +
      `${r.reps} reps after an unmeasured warm-up, every kind in every rep (their order alternating). ` +
      `Memory: the RSS growth of a fresh gateway per kind and count with that many idle sessions open. ` +
      `Floor: the same hop with raw zeromq.js and no ZLink — a TCP client through a \`node:net\` gateway ` +
      `on a DEALER to a ROUTER echo, against a DEALER straight to it, ${r.depth} outstanding, batched per ` +
      `turn — what the extra process and TCP leg cost by themselves.`,
    '',
    `| metric | ${BENCH_SESSION_KINDS.join(' | ')} | target |`,
    `| --- | ${BENCH_SESSION_KINDS.map(() => '---').join(' | ')} | --- |`,
    row('relayed request, req/s', (f) => n(f.relayedReqPerSec)),
    row(
      `relayed ÷ direct \`toActor\` (${n(r.directReqPerSec)} req/s)`,
      (f) => {
        const ratio = ratioOf(f.relayedReqPerSec);
        return `${ratio.toFixed(2)}× (${pass(ratio >= SESSIONS_TARGETS.relayedRatio)})`;
      },
      `≥ ${SESSIONS_TARGETS.relayedRatio.toFixed(2)}×`,
    ),
    row('one-way relay, msg/s', (f) => n(f.onewayMsgPerSec)),
    row('sessions accepted per second', (f) => n(f.acceptsPerSec)),
    row('resume: new connection → held push, ms (median; slowest)', (f) =>
      f.resumes > 0 ? `${f.resumeMs.toFixed(2)}; ${f.resumeMaxMs.toFixed(2)}` : 'none',
    ),
    ...memoryRows,
    '',
    ...(skipped.length > 0 ? [`Memory ${skipped[0] as string}.`, ''] : []),
    '| metric | value |',
    '| --- | --- |',
    `| direct \`toActor\` request, req/s | ${n(r.directReqPerSec)} |`,
    `| raw zeromq.js hop: relayed, direct, req/s | ${n(r.rawRelayedPerSec)}, ${n(r.rawDirectPerSec)} |`,
    `| raw zeromq.js hop: relayed ÷ direct (the floor) | ${rawRatio.toFixed(2)}× |`,
    `| calls, accepts and resumes failed | ${r.failed} |`,
    '',
  ];
}
