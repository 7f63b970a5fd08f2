/**
 * Game clients of the sessions bench (bench/sessions.ts), with the bench's own session peer
 * (bench/systems/session-peer.ts) on every listener kind: one session bound to an Actor with `depth`
 * requests outstanding through it, or one-way sends through it (each 256th a request, so the client
 * never outruns `maxInFlight`: it waits for that answer); a burst of sessions opened and closed (the
 * accept rate); `count` idle sessions held open; resumes after a drop. Each command names the
 * listener's endpoint, whose scheme is its kind.
 */
import { type SecureContext, createSecureContext } from 'node:tls';
import { PAYLOAD } from '../workload/payload.js';
import { emit, onCommands } from '../workload/protocol.js';
import { SessionPeer, type PeerTarget } from './session-peer.js';
import {
  type AcceptCommand,
  type IdleCommand,
  type RelayCommand,
  type ResumeCommand,
  benchTls,
} from './zlink-sessions.js';

const idle: SessionPeer[] = [];
/** Sessions kept for the next relay command (`keep`), by endpoint and Actor. */
const kept = new Map<string, SessionPeer>();
let secureContext: SecureContext | undefined;

function target(url: string, localAddress?: string): PeerTarget {
  if (url.startsWith('tls:') || url.startsWith('wss:'))
    secureContext ??= createSecureContext({ ca: benchTls().ca });
  return { url, secureContext, localAddress };
}

async function relay(c: RelayCommand): Promise<void> {
  const key = `${c.url} ${c.actor}`;
  let peer = kept.get(key);
  if (peer === undefined) {
    peer = new SessionPeer(target(c.url));
    await peer.open();
    await peer.request('login', c.actor);
  }
  let count = 0;
  let failed = 0;
  const end = c.requests === undefined ? performance.now() + c.durationMs : Number.POSITIVE_INFINITY;
  let left = c.requests ?? Number.POSITIVE_INFINITY;
  const t0 = performance.now();
  if (c.oneway) {
    while (performance.now() < end) {
      for (let i = 0; i < 255; i++) peer.send('tap', i);
      count += 255;
      await peer.request('echo', 0).catch(() => failed++);
    }
  } else {
    const session = peer;
    const lane = async (): Promise<void> => {
      while (left-- > 0 && performance.now() < end) {
        try {
          await session.request('echo', PAYLOAD);
          count++;
        } catch {
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: c.depth }, lane));
  }
  const elapsed = performance.now() - t0;
  if (c.keep) kept.set(key, peer);
  else {
    kept.delete(key);
    await peer.close();
  }
  emit({ type: 'relay-result', result: { perSec: (count * 1000) / elapsed, count, failed } });
}

/** Opens `count` peers, `concurrency` at once; the ones that failed to open are counted, not kept. */
async function openMany(
  count: number,
  concurrency: number,
  make: (i: number) => SessionPeer,
  gapMs = 0,
): Promise<{ peers: SessionPeer[]; failed: number }> {
  const peers: SessionPeer[] = [];
  let next = 0;
  let failed = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const peer = make(next++);
      try {
        await peer.open();
        peers.push(peer);
      } catch {
        failed++;
      }
      if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return { peers, failed };
}

async function accept(c: AcceptCommand): Promise<void> {
  const t0 = performance.now();
  const { peers, failed } = await openMany(c.count, c.concurrency, () => new SessionPeer(target(c.url)));
  const elapsed = performance.now() - t0;
  await Promise.all(peers.map((p) => p.close()));
  emit({
    type: 'accept-result',
    result: { perSec: (peers.length * 1000) / elapsed, count: peers.length, failed },
  });
}

async function openIdle(c: IdleCommand): Promise<void> {
  const t0 = performance.now();
  const { peers, failed } = await openMany(
    c.count,
    c.concurrency ?? 256,
    (i) => new SessionPeer(target(c.url, c.sources[i % c.sources.length])),
    c.gapMs,
  );
  idle.push(...peers);
  const elapsed = performance.now() - t0;
  emit({ type: 'idle-open', count: peers.length, failed, perSec: (peers.length * 1000) / elapsed });
}

async function resume(c: ResumeCommand): Promise<void> {
  const ms: number[] = [];
  let failed = 0;
  for (let i = 0; i < c.tries; i++) {
    const first = new SessionPeer(target(c.url));
    const welcome = await first.open([]);
    await first.drop();
    await new Promise((r) => setTimeout(r, c.awayMs));
    const again = new SessionPeer(target(c.url));
    const t0 = performance.now();
    try {
      const pushed = again.nextPush(10_000);
      pushed.catch(() => undefined);
      await again.open([welcome.sessionId, welcome.token, first.received]);
      await pushed;
      ms.push(performance.now() - t0);
    } catch {
      failed++;
    }
    await again.close();
  }
  emit({ type: 'resume-result', result: { ms, failed } });
}

onCommands(
  async (command) => {
    if (command.type === 'relay') await relay(command as unknown as RelayCommand);
    else if (command.type === 'accept') await accept(command as unknown as AcceptCommand);
    else if (command.type === 'idle') await openIdle(command as unknown as IdleCommand);
    else if (command.type === 'resume') await resume(command as unknown as ResumeCommand);
    else if (command.type !== 'shutdown') throw new Error(`unknown command ${command.type}`);
  },
  async () => {
    // Dropped, not closed: the gateway goes with them, and no Close frame need cross for each.
    for (const peer of idle) void peer.drop();
  },
);
emit({ type: 'ready', pid: process.pid });
