/**
 * Sessions (issue 30 item 8): an object server with the player Actors, a gateway with the session
 * listener, and a client process with the Node session client, on an object mesh through a private
 * `redis-server`. Side by side in one run: a request relayed through a session to its bound Actor and
 * back against the same request sent straight to the Actor with `toActor` from the gateway (both with
 * `depth` outstanding, each on an Actor of its own), one-way relay throughput, and the gateway's memory
 * per idle session (RSS before and after `idleSessions` sessions open). Beside them, the floor: the
 * same hop with raw zeromq.js and no ZLink (bench/systems/raw-hop.ts), relayed and direct, so the ratio
 * can be read against what the extra process and TCP leg cost by themselves.
 */
import { join } from 'node:path';
import { startPrivateRedis } from '../sample/private-redis.js';
import { BenchChild } from './children.js';
import { log } from './log.js';
import type { ThroughputResult } from './systems/zlink-sessions.js';

const STARTUP_TIMEOUT_MS = 60_000;
const STANDARD_REDIS = 'redis://127.0.0.1:6379';
const WARMUP_MS = 500;

export interface SessionsSection {
  readonly store: string;
  readonly depth: number;
  readonly reps: number;
  /** Medians over the reps. */
  readonly relayedReqPerSec: number;
  readonly directReqPerSec: number;
  readonly onewayMsgPerSec: number;
  /** The same hop with raw zeromq.js (medians over the reps). */
  readonly rawRelayedPerSec: number;
  readonly rawDirectPerSec: number;
  readonly idleSessions: number;
  readonly rssPerSessionBytes: number;
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
    const { port } = await gateway.next('ready', STARTUP_TIMEOUT_MS);
    const client = new BenchChild('sessions client', join(dir, 'zlink-sessions-client.js'), {
      env: { ...env, BENCH_PORT: String(port) },
    });
    children.push(client);
    await client.next('ready', STARTUP_TIMEOUT_MS);
    const raw = await startRawHop(dir, children);
    const relayed: number[] = [];
    const direct: number[] = [];
    const oneway: number[] = [];
    const rawRelayed: number[] = [];
    const rawDirect: number[] = [];
    let failed = 0;
    // Unmeasured warm-up of both paths (the JIT, the first sessions and routes), as the other sections do.
    client.command({ type: 'relay', actor: 'warm-up', durationMs: WARMUP_MS, depth, oneway: false });
    await client.next('relay-result', WARMUP_MS + 60_000);
    gateway.command({ type: 'direct', actor: 'warm-up-direct', durationMs: WARMUP_MS, depth });
    await gateway.next('direct-result', WARMUP_MS + 60_000);
    await raw.run('gateway', WARMUP_MS, depth);
    await raw.run('direct', WARMUP_MS, depth);
    for (let rep = 0; rep < reps; rep++) {
      // Interleaved, so a drift in the machine's load reaches both paths alike.
      client.command({ type: 'relay', actor: `relayed-${rep}`, durationMs: repMs, depth, oneway: false });
      const r = (await client.next('relay-result', repMs + 60_000)).result as ThroughputResult;
      gateway.command({ type: 'direct', actor: `direct-${rep}`, durationMs: repMs, depth });
      const d = (await gateway.next('direct-result', repMs + 60_000)).result as ThroughputResult;
      client.command({ type: 'relay', actor: `oneway-${rep}`, durationMs: repMs, depth, oneway: true });
      const o = (await client.next('relay-result', repMs + 60_000)).result as ThroughputResult;
      const rr = await raw.run('gateway', repMs, depth);
      const rd = await raw.run('direct', repMs, depth);
      relayed.push(r.perSec);
      direct.push(d.perSec);
      oneway.push(o.perSec);
      rawRelayed.push(rr.perSec);
      rawDirect.push(rd.perSec);
      failed += r.failed + d.failed + o.failed;
      log(
        `sessions rep ${rep + 1}/${reps}: relayed ${Math.round(r.perSec)} req/s, direct ${Math.round(d.perSec)} req/s, one-way ${Math.round(o.perSec)} msg/s; raw zeromq.js hop: relayed ${Math.round(rr.perSec)}, direct ${Math.round(rd.perSec)}`,
      );
    }
    gateway.command({ type: 'rss' });
    const before = (await gateway.next('rss', 30_000)).rss as number;
    client.command({ type: 'idle', count: idleSessions });
    await client.next('idle-open', 300_000);
    await new Promise((r) => setTimeout(r, 500));
    gateway.command({ type: 'rss' });
    const after = await gateway.next('rss', 30_000);
    const open = after.sessions as number;
    const rssPerSessionBytes = open > 0 ? ((after.rss as number) - before) / open : 0;
    log(`sessions: ${open} idle sessions, ${Math.round(rssPerSessionBytes)} bytes of gateway RSS each`);
    return {
      store,
      depth,
      reps,
      relayedReqPerSec: median(relayed),
      directReqPerSec: median(direct),
      onewayMsgPerSec: median(oneway),
      rawRelayedPerSec: median(rawRelayed),
      rawDirectPerSec: median(rawDirect),
      idleSessions: open,
      rssPerSessionBytes,
      failed,
    };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    for (const child of children.reverse()) await child.stop(5000);
    await privateRedis?.stop();
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
  const ratio = r.directReqPerSec > 0 ? r.relayedReqPerSec / r.directReqPerSec : 0;
  const rawRatio = r.rawDirectPerSec > 0 ? r.rawRelayedPerSec / r.rawDirectPerSec : 0;
  return [
    '### Sessions',
    '',
    `An object server, a gateway with the session listener and a client process (${r.store}). Relayed: ` +
      `the Node session client keeps ${r.depth} requests outstanding through one session to its bound ` +
      `Actor (client → gateway → Actor and back); direct: the gateway keeps ${r.depth} outstanding on ` +
      `another Actor with \`toActor\`. Medians of ${r.reps} interleaved reps after an unmeasured warm-up. Memory: the gateway's RSS ` +
      `growth with ${n(r.idleSessions)} idle sessions open. Floor: the same hop with raw zeromq.js and no ` +
      `ZLink — a TCP client through a STREAM gateway to a ROUTER echo, against a DEALER straight to it, ` +
      `${r.depth} outstanding, batched per turn — what the extra process and TCP leg cost by themselves.`,
    '',
    '| metric | value | target |',
    '| --- | --- | --- |',
    `| relayed request, req/s | ${n(r.relayedReqPerSec)} | |`,
    `| direct \`toActor\` request, req/s | ${n(r.directReqPerSec)} | |`,
    `| relayed ÷ direct | ${ratio.toFixed(2)}× | ≥ 0.70× ${ratio >= 0.7 ? 'PASS' : 'FAIL'} |`,
    `| raw zeromq.js hop: relayed, direct, req/s | ${n(r.rawRelayedPerSec)}, ${n(r.rawDirectPerSec)} | |`,
    `| raw zeromq.js hop: relayed ÷ direct (the floor) | ${rawRatio.toFixed(2)}× | |`,
    `| ZLink's relayed ÷ direct against the floor's | ${rawRatio > 0 ? (ratio / rawRatio).toFixed(2) : '—'}× | |`,
    `| one-way relay, msg/s | ${n(r.onewayMsgPerSec)} | |`,
    `| gateway RSS per idle session | ${n(r.rssPerSessionBytes)} bytes | |`,
    `| calls failed | ${r.failed} | 0 |`,
    '',
  ];
}
