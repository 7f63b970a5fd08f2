/**
 * Session fuzz (issue 30, item 7; every listener kind, issue 53, item 8): hostile bytes on each
 * listener entry of a gateway in its own process — `tcp`, `tls` (the frames inside TLS) and
 * `websocket` (the frame bodies as binary messages, among the WebSocket's own faults) — from this
 * process, over real sockets on 127.0.0.1.
 *
 * Size: `ZLINK_FUZZ_FRAMES` frames in all (default 100000, the CI size; `npm run fuzz` runs 10⁶),
 * split evenly over the kinds, one kind after the other.
 * Seed: `ZLINK_FUZZ_SEED` (as the other fuzz suites: default fixed, `random` prints a fresh one).
 *
 * Most frames are well framed but hostile inside (unknown packets, payloads that do not decode,
 * deep nesting, pings, pongs, odd correlations; on a WebSocket also fragments, control frames between
 * them and longer length forms): they must be answered or dropped without closing the connection.
 * Each connection then breaks the stream once (session-input.ts's `fatal`: bad framing, a length over
 * the limit, an empty frame, a body that is no array, an unknown kind, a correlation of 0, a second
 * Hello, too many requests in flight, a half-close, a reset; on `tls` bytes that are no TLS; on
 * `websocket` text, reserved opcodes, unmasked or wrongly masked frames, RSV bits, stray
 * continuations, bad control frames, impossible lengths, bad close codes): that connection must
 * close, with its reason counted by the gateway for that kind. Throughout, a bystander session on each
 * kind requests `echo` and gets every answer; at the end the gateway still runs and each entry holds
 * only its bystander.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ZLinkSessionClient } from '../../lib/session-client/index.js';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { mb } from '../helpers/heap.js';
import { testTls } from '../helpers/test-tls.js';
import {
  HostileSession,
  type HostileTarget,
  type SessionKind,
  hostileTarget,
} from '../integration/sessions/hostile-peers.js';
import { Rng, fuzzSeed } from './generator.js';
import { MAX_FRAME, MAX_IN_FLIGHT, benignStream, fatal } from './session-inputs.js';

const TOTAL = Number(process.env.ZLINK_FUZZ_FRAMES ?? 100000);
const SEED = fuzzSeed();
const KINDS: readonly SessionKind[] = ['tcp', 'tls', 'websocket'];
const TIMEOUT_MS = 90000 + TOTAL * 0.6;
const WORKERS = 16;
const pem = testTls();

interface EntrySnapshot {
  readonly kind: SessionKind;
  readonly sessions: number;
  readonly handshaking: number;
  readonly heldBytes: number;
  readonly tlsErrors?: number;
}
interface Snapshot extends ChildMessage {
  readonly sessions: EntrySnapshot[];
  readonly counts: Record<string, number>;
  readonly rss: number;
  readonly heapUsed?: number;
}

let gateway: ChildApp | undefined;
afterEach(async () => {
  gateway?.kill();
  await gateway?.closed;
  gateway = undefined;
});

async function snapshot(gc = false): Promise<Snapshot> {
  return (await (gateway as ChildApp).call({ type: 'snapshot', gc }, 30000)) as Snapshot;
}

/** A fault before its connection's Hello is counted as a refusal, after it as a close. */
const faults = (s: Snapshot, reason: string): number =>
  (s.counts[`session:closed:${reason}`] ?? 0) + (s.counts[`session:refused:${reason}`] ?? 0);

/** What one kind's share of the fuzz did, and what the gateway must have counted for it. */
interface KindRun {
  frames: number;
  connections: number;
  /** The faults whose connection was not ended within 5 s: what they were (the first bytes). */
  readonly notClosed: string[];
  tlsGarbage: number;
  readonly expected: Map<string, number>;
}

/**
 * `frames` hostile frames on one entry, over connections opened in parallel (each worker with its own
 * generator): a closed connection lingers a little on the gateway (its Close frame's chance), which one
 * at a time would spend as time.
 */
async function fuzzKind(target: HostileTarget, frames: number, seed: number): Promise<KindRun> {
  const run: KindRun = { frames: 0, connections: 0, notClosed: [], tlsGarbage: 0, expected: new Map() };
  const worker = async (rng: Rng): Promise<void> => {
    while (run.frames < frames) {
      const peer = await new HostileSession(target).hello(rng.chance(0.5) ? null : 'token');
      run.connections++;
      // Fewer than the in-flight limit: these must never close the connection.
      const benignCount = rng.int(MAX_IN_FLIGHT - 4);
      run.frames += benignCount + 1;
      // Cut the stream at random points: the gateway must join frames (and WebSocket frames) split anywhere.
      const stream = benignStream(rng, target.kind, benignCount);
      for (let at = 0; at < stream.length;) {
        const n = 1 + rng.int(3000);
        peer.write(stream.subarray(at, at + n));
        at += n;
      }
      const fault = fatal(rng, target.kind);
      if (fault.act === 'halfClose') peer.end();
      else if (fault.act === 'reset') peer.reset();
      else if (fault.act === 'tlsGarbage') {
        run.tlsGarbage++;
        peer.writeTcp(fault.bytes as Buffer);
      } else peer.write(fault.bytes as Buffer);
      if (fault.reason) run.expected.set(fault.reason, (run.expected.get(fault.reason) ?? 0) + 1);
      if (!(await peer.endedWithin(5000)))
        run.notClosed.push(`${fault.act ?? 'bytes'} ${fault.bytes?.subarray(0, 16).toString('hex') ?? ''}`);
      peer.close();
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(new Rng(seed + i))));
  return run;
}

describe('session listener fuzz', () => {
  it(
    `takes ${TOTAL} hostile frames on tcp, tls and websocket without a crash, closing only the connections that broke the stream`,
    async () => {
      gateway = new ChildApp('session-gateway', 'e2e/session-gateway.app.js', {
        listener: {
          maxFrameBytes: MAX_FRAME,
          maxInFlight: MAX_IN_FLIGHT,
          helloTimeoutMs: 2000,
          listen: [
            { bindHost: '127.0.0.1', kind: 'tcp' },
            { bindHost: '127.0.0.1', kind: 'tls', tls: { key: pem.key, cert: pem.cert } },
            { bindHost: '127.0.0.1', kind: 'websocket', path: '/game' },
          ],
        },
      });
      const { endpoints } = (await gateway.next('ready', 60000)) as ChildMessage & { endpoints: string[] };
      const targets = endpoints.map((url) => hostileTarget(url, pem.ca));
      expect(targets.map((t) => t.kind)).toEqual(KINDS);

      // A bystander session on each kind, requesting throughout.
      const answered = new Map<SessionKind, number>();
      const failures: string[] = [];
      let running = true;
      const bystanders = await Promise.all(
        targets.map(async (t, i) => {
          const client = new ZLinkSessionClient({
            endpoint: endpoints[i] as string,
            ...(t.kind === 'tls' && { tls: { ca: pem.ca } }),
          });
          await client.connect();
          return client;
        }),
      );
      const loops = bystanders.map(async (client, i) => {
        const kind = KINDS[i] as SessionKind;
        for (let n = 0; running; n++) {
          try {
            const answer = await client.request('echo', n);
            if (answer !== n) failures.push(`${kind}: ${JSON.stringify(answer)} for ${n}`);
            answered.set(kind, (answered.get(kind) ?? 0) + 1);
          } catch (error) {
            failures.push(`${kind}: ${String(error)}`);
            return;
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      });

      const lines: string[] = [];
      const t0 = Date.now();
      let before = await snapshot();
      const share = Math.ceil(TOTAL / KINDS.length);
      for (const [i, target] of targets.entries()) {
        const started = Date.now();
        const run = await fuzzKind(target, share, SEED + 1000 * i);
        const after = await snapshot();
        lines.push(
          `${target.kind}: ${run.frames} frames over ${run.connections} connections in ${Date.now() - started} ms`,
        );
        expect({ kind: target.kind, notClosed: run.notClosed }).toEqual({ kind: target.kind, notClosed: [] });
        for (const [reason, n] of run.expected) {
          const counted = faults(after, reason) - faults(before, reason);
          expect({ kind: target.kind, reason, counted: counted >= n }).toEqual({
            kind: target.kind,
            reason,
            counted: true,
          });
        }
        if (target.kind === 'tls') {
          const tlsErrors = (s: Snapshot): number => s.sessions[i]?.tlsErrors ?? 0;
          expect(tlsErrors(after) - tlsErrors(before)).toBeGreaterThanOrEqual(run.tlsGarbage);
        }
        before = after;
      }
      const ms = Date.now() - t0;
      running = false;
      await Promise.all(loops);
      expect(failures).toEqual([]);
      for (const [i, client] of bystanders.entries())
        expect(await client.request('echo', `after ${KINDS[i]}`)).toBe(`after ${KINDS[i]}`);
      const last = await snapshot(true);
      process.stdout.write(
        `session fuzz: seed ${SEED}, ${TOTAL} frames in ${ms} ms (${lines.join('; ')}); bystanders answered ` +
          `${JSON.stringify(Object.fromEntries(answered))}; gateway RSS ${mb(last.rss)} MB, heap after GC ` +
          `${mb(last.heapUsed ?? 0)} MB; counted ${JSON.stringify(Object.fromEntries(Object.entries(last.counts).filter(([k]) => k.startsWith('session:'))))}\n`,
      );
      expect(gateway.running).toBe(true);
      for (const kind of KINDS) expect(answered.get(kind) ?? 0).toBeGreaterThan(0);
      expect(last.sessions.map((s) => [s.kind, s.sessions, s.handshaking])).toEqual(
        KINDS.map((kind) => [kind, 1, 0]),
      );
      await Promise.all(bystanders.map((c) => c.close()));
    },
    TIMEOUT_MS,
  );
});
