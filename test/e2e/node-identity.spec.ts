/**
 * A NodeRid belongs to one live connection and one key (issue 27), between OS processes. Node A and
 * node B run in child processes and call each other the whole time; from this process a raw zeromq
 * ROUTER claims B's NodeRid on a second connection to A — its routing id `node-b`, its hello a copy
 * of B's (plain ZMTP) or one holding another admitted key (CURVE). The claim is refused and counted,
 * no call of A or B fails, nothing reaches the intruder's socket, and nobody crashes: libzmq used to
 * hand `node-b` to the intruder and abort A a few seconds later. Then B is paused and a restarted
 * copy of it (a new generation, the same key) takes over at once, and the paused one is refused when
 * it wakes; and a 30 s flood of duplicate-identity connections leaves A up with its memory flat.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zmq from 'zeromq';
import { RecordKind, encodeMeshRequest, encodeMeshState, encodePayload } from '../../lib/core/index.js';
import { type ZLinkKeyPair, zlinkKeyPair } from '../../lib/index.js';
import { ChildApp, type ChildMessage, readLog } from '../helpers/child-app.js';

const MARKER = 'identity-e2e-marker-5d1f07';

interface Load {
  ok: number;
  failed: { code: string; at: number }[];
  answeredBy: Record<string, number>;
}

/** A raw ROUTER announcing `routingId` toward `endpoint`: it keeps (and counts) whatever arrives. */
class Claimer {
  readonly socket: zmq.Router;
  readonly received: Buffer[][] = [];
  private readonly loop: Promise<void>;

  constructor(endpoint: string, routingId: string, curve?: { keys: ZLinkKeyPair; serverKey: string }) {
    this.socket = new zmq.Router({
      routingId,
      linger: 0,
      ...(curve && {
        curveServerKey: curve.serverKey,
        curvePublicKey: curve.keys.publicKey,
        curveSecretKey: curve.keys.secretKey,
      }),
    });
    const socket = this.socket;
    socket.connect(endpoint, { routingId: 'target' });
    this.loop = (async () => {
      for (;;) {
        try {
          this.received.push(await socket.receive());
        } catch {
          return;
        }
      }
    })();
  }

  send(record: Uint8Array): Promise<void> {
    return this.socket.send(['target', record]).catch(() => undefined);
  }

  saw(marker: string): boolean {
    return this.received.some((m) => m.some((f) => f.includes(marker)));
  }

  async close(): Promise<void> {
    if (!this.socket.closed) this.socket.close();
    await this.loop;
  }
}

/** A hello claiming NodeRid `rid`'s run `generation`, with `proof` in the proof field. */
function claim(rid: string, generation: string, proof?: Uint8Array): Uint8Array {
  const state = { mesh: 'game', rid, generation, objectRole: 'none' as const, memberships: [], revision: 1 };
  return encodeMeshState(RecordKind.MeshHello, state, proof);
}

class Pair {
  readonly dir = mkdtempSync(join(tmpdir(), 'zlink-identity-'));
  a!: ChildApp;
  b!: ChildApp;
  aReady!: ChildMessage;
  bReady!: ChildMessage;
  readonly extra: ChildApp[] = [];
  readonly keys = { a: zlinkKeyPair(), b: zlinkKeyPair(), t: zlinkKeyPair() };

  constructor(readonly secure: boolean) {}

  log(name: string): string {
    return join(this.dir, `${name}.log`);
  }

  /** Starts node-a (accepting; B and T admitted under CURVE), then a node-b process that connects to it. */
  async start(): Promise<void> {
    const { keys } = this;
    this.a = new ChildApp('node-a', 'e2e/identity-node.app.js', {
      rid: 'node-a',
      label: 'a',
      executionLog: this.log('a'),
      ...(this.secure && {
        curve: {
          keys: keys.a,
          allow: [
            { rid: 'node-b', publicKey: keys.b.publicKey },
            { rid: 'node-t', publicKey: keys.t.publicKey },
          ],
        },
      }),
    });
    this.aReady = await this.a.next('ready');
    this.b = this.startB('b');
    this.bReady = await this.b.next('ready');
    await this.a.call({ type: 'waitPeer', rid: 'node-b', generation: this.bReady.generation });
    await this.b.call({ type: 'waitPeer', rid: 'node-a' });
  }

  /** A node-b process (the first, or a restarted copy: same NodeRid and key, a new generation). */
  startB(label: string): ChildApp {
    const { keys } = this;
    const child = new ChildApp(`node-b (${label})`, 'e2e/identity-node.app.js', {
      rid: 'node-b',
      label,
      executionLog: this.log(label),
      peers: [
        {
          endpoint: this.aReady.endpoint,
          rid: 'node-a',
          ...(this.secure && { publicKey: keys.a.publicKey }),
        },
      ],
      ...(this.secure && { curve: { keys: keys.b, allow: [] } }),
    });
    if (label !== 'b') this.extra.push(child);
    return child;
  }

  async report(child: ChildApp): Promise<{
    counts: Record<string, number>;
    refusals: string[];
    memory: NodeJS.MemoryUsage;
    peers: { rid: string; generation: string }[];
  }> {
    return (await child.call({ type: 'report' })) as never;
  }

  /** Shuts every process down; how each one ended (a crash shows as a signal or a non-zero code). */
  async stop(): Promise<{ name: string; code: number | null; signal: string | null }[]> {
    const ended = [];
    for (const child of [this.a, this.b, ...this.extra]) {
      if (!child) continue;
      child.kill('SIGCONT');
      if (child.running) {
        child.send({ type: 'shutdown' });
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([child.exited, new Promise((r) => (timer = setTimeout(r, 10000)))]);
        clearTimeout(timer);
      }
      child.kill();
      ended.push({ name: child.name, ...(await child.exited) });
    }
    rmSync(this.dir, { recursive: true, force: true });
    return ended;
  }
}

/** Stops the pair: every process ended by its own shutdown, none by a crash. */
async function stopCleanly(pair: Pair): Promise<void> {
  const ended = await pair.stop();
  expect(ended).toEqual(ended.map((e) => ({ name: e.name, code: 0, signal: null })));
}

const stopLoad = async (child: ChildApp): Promise<Load> =>
  (await child.call({ type: 'stopLoad' }, 30000)) as unknown as Load;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Asks `check` every 100 ms until it holds; fails after `timeoutMs`. */
async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

describe.each([
  ['CURVE, the intruder holding another admitted key', true],
  ['plain ZMTP', false],
])('a second connection claiming a connected NodeRid (%s)', (_mode, secure) => {
  const pair = new Pair(secure);

  beforeAll(() => pair.start(), 60000);
  afterAll(() => stopCleanly(pair), 60000);

  it('is refused and counted; both nodes keep working (no failed call), nothing reaches the intruder, nobody crashes', async () => {
    {
      await pair.a.call({ type: 'startLoad', target: 'node-b', marker: MARKER });
      await pair.b.call({ type: 'startLoad', target: 'node-a', marker: MARKER });
      const generation = pair.bReady.generation as string;
      const curve = secure ? { keys: pair.keys.t, serverKey: pair.keys.a.publicKey } : undefined;
      const claimers = [
        new Claimer(pair.aReady.endpoint as string, 'node-b', curve),
        new Claimer(pair.aReady.endpoint as string, 'node-b', curve),
      ];
      try {
        // A copy of B's hello with no proof, with a made-up one, then a business record.
        for (let round = 0; round < 10; round++) {
          for (const c of claimers) {
            await c.send(claim('node-b', generation));
            await c.send(claim('node-b', generation, Buffer.alloc(32, round)));
            await c.send(encodeMeshRequest(round + 1, undefined, 'echo', undefined, encodePayload(MARKER)));
          }
          await sleep(300);
        }
        const reason = secure ? 'security_refused:ridKeyMismatch' : 'security_refused:ridInUse';
        await eventually(
          async () => ((await pair.report(pair.a)).counts[reason] ?? 0) >= 20,
          10000,
          `A counted the claims (${reason})`,
        );
        // The abort used to come within seconds of the takeover: keep both loads running a while.
        await sleep(4000);
        const [fromA, fromB] = [await stopLoad(pair.a), await stopLoad(pair.b)];
        expect({ failed: fromA.failed, answeredBy: Object.keys(fromA.answeredBy) }).toEqual({
          failed: [],
          answeredBy: ['b'],
        });
        expect({ failed: fromB.failed, answeredBy: Object.keys(fromB.answeredBy) }).toEqual({
          failed: [],
          answeredBy: ['a'],
        });
        expect(fromA.ok).toBeGreaterThan(100);
        expect(fromB.ok).toBeGreaterThan(100);
        // Each call ran once, in the process it was meant for; the intruder's request ran nowhere.
        expect(readLog(pair.log('a'))).toHaveLength(fromB.ok);
        expect(readLog(pair.log('b'))).toHaveLength(fromA.ok);
        for (const c of claimers)
          expect({ received: c.received.length, marker: c.saw(MARKER) }).toEqual({
            received: 0,
            marker: false,
          });
        expect([pair.a.running, pair.b.running]).toEqual([true, true]);
        const peers = (await pair.report(pair.a)).peers;
        expect(peers).toEqual([{ rid: 'node-b', generation }]);
      } finally {
        await Promise.all(claimers.map((c) => c.close()));
      }
    }
  }, 90000);

  if (secure) {
    it('a restarted copy (new generation, same key) takes over from a paused node at once; the paused one is refused when it wakes', async () => {
      pair.b.kill('SIGSTOP');
      const copy = pair.startB('b2');
      const copyReady = await copy.next('ready');
      await pair.a.call({ type: 'waitPeer', rid: 'node-b', generation: copyReady.generation }, 15000);
      await pair.a.call({ type: 'startLoad', target: 'node-b', marker: MARKER });
      await sleep(1500);
      const before = await stopLoad(pair.a);
      expect({ failed: before.failed, answeredBy: Object.keys(before.answeredBy) }).toEqual({
        failed: [],
        answeredBy: ['b2'],
      });
      await wakeRefused(pair, copy, copyReady);
    }, 90000);
  }
});

describe('a paused node lost for silence before its restarted copy came (CURVE)', () => {
  const pair = new Pair(true);

  beforeAll(() => pair.start(), 60000);
  afterAll(() => stopCleanly(pair), 60000);

  it('is refused when it wakes: the copy keeps the NodeRid', async () => {
    pair.b.kill('SIGSTOP');
    // A judges the paused node silent before the copy says hello (a copy slow to start on a loaded
    // machine): no hello replaced its run, yet the copy's did once it came.
    await eventually(
      async () => (await pair.report(pair.a)).peers.length === 0,
      15000,
      'A lost the paused node',
    );
    const copy = pair.startB('b2');
    const copyReady = await copy.next('ready');
    await pair.a.call({ type: 'waitPeer', rid: 'node-b', generation: copyReady.generation }, 15000);
    await wakeRefused(pair, copy, copyReady);
  }, 90000);
});

/**
 * The paused node-b wakes while its restarted copy is A's peer: its old connection routes to nobody,
 * its new hello is refused, and every call from A keeps reaching the copy.
 */
async function wakeRefused(pair: Pair, copy: ChildApp, copyReady: ChildMessage): Promise<void> {
  // The paused node wakes: its old connection routes to nobody, and its new hello is refused.
  await pair.a.call({ type: 'startLoad', target: 'node-b', marker: MARKER });
  pair.b.kill('SIGCONT');
  await eventually(
    async () =>
      (await pair.report(pair.a)).refusals.some((r) =>
        r.includes(`generation '${String(pair.bReady.generation)}', which a later one replaced`),
      ),
    15000,
    'A refused the woken node',
  );
  await sleep(1000);
  const after = await stopLoad(pair.a);
  expect({ failed: after.failed, answeredBy: Object.keys(after.answeredBy) }).toEqual({
    failed: [],
    answeredBy: ['b2'],
  });
  expect((await pair.report(pair.a)).peers).toEqual([{ rid: 'node-b', generation: copyReady.generation }]);
  expect((await pair.report(pair.b)).peers).toEqual([]);
  expect([pair.a.running, pair.b.running, copy.running]).toEqual([true, true, true]);
}

describe('a flood of duplicate-identity connections for 30 s (plain ZMTP)', () => {
  const pair = new Pair(false);

  beforeAll(() => pair.start(), 60000);
  afterAll(() => stopCleanly(pair), 60000);

  it('leaves the node up with its memory flat, and the real node keeps working', async () => {
    await pair.a.call({ type: 'startLoad', target: 'node-b', marker: MARKER });
    await pair.b.call({ type: 'startLoad', target: 'node-a', marker: MARKER });
    const endpoint = pair.aReady.endpoint as string;
    const generation = pair.bReady.generation as string;
    const open = new Set<Claimer>();
    let connections = 0;
    let received = 0;
    const flood = async (ms: number): Promise<void> => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        // Every connection announces the same two routing ids: B's NodeRid, and one fixed id of its own.
        const c = new Claimer(endpoint, connections % 2 === 0 ? 'node-b' : 'z-the-same-every-time');
        connections++;
        open.add(c);
        await c.send(claim('node-b', generation));
        await c.send(Buffer.from('not a record'));
        if (open.size > 20) {
          const oldest = open.values().next().value as Claimer;
          open.delete(oldest);
          received += oldest.received.length;
          await oldest.close();
        }
        await sleep(5);
      }
    };
    try {
      await flood(5000);
      const warm = (await pair.report(pair.a)).memory;
      await flood(25000);
      const end = (await pair.report(pair.a)).memory;
      for (const c of open) received += c.received.length;
      const [fromA, fromB] = [await stopLoad(pair.a), await stopLoad(pair.b)];
      console.log(
        `identity flood: ${connections} connections; node-a rss ${mb(warm.rss)} → ${mb(end.rss)} MB, ` +
          `heap ${mb(warm.heapUsed)} → ${mb(end.heapUsed)} MB; calls ${fromA.ok} + ${fromB.ok}`,
      );
      expect(connections).toBeGreaterThan(1000);
      expect(end.rss - warm.rss).toBeLessThan(64 * 1024 * 1024);
      expect(end.heapUsed - warm.heapUsed).toBeLessThan(32 * 1024 * 1024);
      expect({ failedA: fromA.failed, failedB: fromB.failed, received }).toEqual({
        failedA: [],
        failedB: [],
        received: 0,
      });
      expect([pair.a.running, pair.b.running]).toEqual([true, true]);
    } finally {
      await Promise.all([...open].map((c) => c.close()));
    }
  }, 120000);
});

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
