/**
 * Sessions (issue 30 item 8): an object server with the player Actors, a gateway with the session
 * listener, and a client process with the Node session client, on an object mesh through a private
 * `redis-server`. Side by side in one run: a request relayed through a session to its bound Actor and
 * back against the same request sent straight to the Actor with `toActor` from the gateway (both with
 * `depth` outstanding, each on an Actor of its own), one-way relay throughput, and the gateway's memory
 * per idle session (RSS before and after `idleSessions` sessions open).
 */
import { join } from 'node:path';
import { startPrivateRedis } from '../sample/private-redis.js';
import { BenchChild } from './children.js';
import { log } from './live-system.js';
import type { ThroughputResult } from './systems/zlink-sessions.js';

const STARTUP_TIMEOUT_MS = 60_000;
const STANDARD_REDIS = 'redis://127.0.0.1:6379';

export interface SessionsSection {
  readonly store: string;
  readonly depth: number;
  readonly reps: number;
  /** Medians over the reps. */
  readonly relayedReqPerSec: number;
  readonly directReqPerSec: number;
  readonly onewayMsgPerSec: number;
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
    const relayed: number[] = [];
    const direct: number[] = [];
    const oneway: number[] = [];
    let failed = 0;
    for (let rep = 0; rep < reps; rep++) {
      // Interleaved, so a drift in the machine's load reaches both paths alike.
      client.command({ type: 'relay', actor: `relayed-${rep}`, durationMs: repMs, depth, oneway: false });
      const r = (await client.next('relay-result', repMs + 60_000)).result as ThroughputResult;
      gateway.command({ type: 'direct', actor: `direct-${rep}`, durationMs: repMs, depth });
      const d = (await gateway.next('direct-result', repMs + 60_000)).result as ThroughputResult;
      client.command({ type: 'relay', actor: `oneway-${rep}`, durationMs: repMs, depth, oneway: true });
      const o = (await client.next('relay-result', repMs + 60_000)).result as ThroughputResult;
      relayed.push(r.perSec);
      direct.push(d.perSec);
      oneway.push(o.perSec);
      failed += r.failed + d.failed + o.failed;
      log(
        `sessions rep ${rep + 1}/${reps}: relayed ${Math.round(r.perSec)} req/s, direct ${Math.round(d.perSec)} req/s, one-way ${Math.round(o.perSec)} msg/s`,
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

/** The markdown of the section. */
export function sessionsMarkdown(r: SessionsSection | { error: string }): string[] {
  if ('error' in r) return [`**Sessions failed**: ${r.error.split('\n')[0]}`, ''];
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const ratio = r.directReqPerSec > 0 ? r.relayedReqPerSec / r.directReqPerSec : 0;
  return [
    '### Sessions',
    '',
    `An object server, a gateway with the session listener and a client process (${r.store}). Relayed: ` +
      `the Node session client keeps ${r.depth} requests outstanding through one session to its bound ` +
      `Actor (client → gateway → Actor and back); direct: the gateway keeps ${r.depth} outstanding on ` +
      `another Actor with \`toActor\`. Medians of ${r.reps} interleaved reps. Memory: the gateway's RSS ` +
      `growth with ${n(r.idleSessions)} idle sessions open.`,
    '',
    '| metric | value | target |',
    '| --- | --- | --- |',
    `| relayed request, req/s | ${n(r.relayedReqPerSec)} | |`,
    `| direct \`toActor\` request, req/s | ${n(r.directReqPerSec)} | |`,
    `| relayed ÷ direct | ${ratio.toFixed(2)}× | ≥ 0.70× ${ratio >= 0.7 ? 'PASS' : 'FAIL'} |`,
    `| one-way relay, msg/s | ${n(r.onewayMsgPerSec)} | |`,
    `| gateway RSS per idle session | ${n(r.rssPerSessionBytes)} bytes | |`,
    `| calls failed | ${r.failed} | 0 |`,
    '',
  ];
}
