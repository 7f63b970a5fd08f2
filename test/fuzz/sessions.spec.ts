/**
 * Session fuzz (issue 30, item 7): hostile bytes on a session listener's port, from this process to
 * a gateway in its own process, over real TCP on 127.0.0.1.
 *
 * Size: `ZLINK_FUZZ_FRAMES` frames in all (default 100000, the CI size; `npm run fuzz` runs 10⁶).
 * Seed: `ZLINK_FUZZ_SEED` (as the other fuzz suites: default fixed, `random` prints a fresh one).
 *
 * Most frames are well framed but hostile inside (unknown packets, payloads that do not decode,
 * deep nesting, pings, pongs, odd correlations): they must be answered or dropped without closing
 * the connection. About one in twenty breaks the stream (bad framing, a length over the limit, an
 * empty frame, a body that is no array, an unknown kind, a correlation of 0, a second Hello,
 * too many requests in flight, a half-close, a reset): that connection must close, with its reason
 * counted by the gateway. Throughout, a bystander session requests `echo` and gets every answer; at
 * the end the gateway still runs and its held bytes are back to what the bystander holds.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect, type Socket } from 'node:net';
import { Packr } from 'msgpackr';
import { ZLinkSessionClient } from '../../lib/session-client/index.js';
import { ChildApp } from '../helpers/child-app.js';
import { Rng, fuzzSeed } from './generator.js';

const TOTAL = Number(process.env.ZLINK_FUZZ_FRAMES ?? 100000);
const SEED = fuzzSeed();
const MAX_FRAME = 4096;
const MAX_IN_FLIGHT = 32;
const TIMEOUT_MS = 60000 + TOTAL * 0.5;
const WORKERS = 16;
const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });

function framed(body: Uint8Array): Buffer {
  const out = Buffer.alloc(4 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.set(body, 4);
  return out;
}

const pack = (items: unknown[]): Buffer => framed(packr.pack(items));

/** A frame that must not close the connection (after the Hello). */
function benign(rng: Rng): Buffer {
  const correlation = 1 + rng.int(0xfffffffe);
  switch (rng.int(8)) {
    case 0:
      return pack([3, correlation, `p${rng.int(1000)}`, rng.int(100)]); // NoHandler
    case 1:
      return pack([6, rng.pick(['note', 'x', 'é€']), { deep: [[[[rng.int(9)]]]] }]);
    case 2:
      return pack([8]);
    case 3:
      return pack([9]);
    case 4: {
      // `echo` with a payload that does not decode (a reserved msgpack byte): DecodeError.
      const body = Buffer.concat([
        Buffer.from([0x94, 3]),
        packr.pack(correlation),
        packr.pack('echo'),
        Buffer.from([0xc1]),
      ]);
      return framed(body);
    }
    case 5:
      return pack([3, correlation, 'echo', rng.bytes(rng.int(64))]);
    case 6:
      return pack([6, 'note', 'x'.repeat(rng.int(MAX_FRAME - 64))]);
    default:
      return pack([3, correlation, 'echo', [1, 'a', null, true, { k: rng.int(5) }]]);
  }
}

/** A fault that must close the connection, and the reason the gateway counts for it. */
function fatal(rng: Rng): { bytes: Buffer | 'halfClose' | 'reset'; reason: string | undefined } {
  switch (rng.int(10)) {
    case 0: {
      const head = Buffer.alloc(4);
      head.writeUInt32BE(MAX_FRAME + 1 + rng.int(1 << 30), 0);
      return { bytes: head, reason: 'frameTooLarge' };
    }
    case 1:
      return { bytes: Buffer.alloc(4), reason: 'protocolError' };
    case 2:
      return { bytes: framed(Buffer.from([0xc1, ...rng.bytes(rng.int(16))])), reason: 'protocolError' };
    case 3:
      return { bytes: pack([11 + rng.int(200)]), reason: 'protocolError' };
    case 4:
      return { bytes: pack([1, 1]), reason: 'protocolError' }; // a second Hello
    case 5:
      return { bytes: framed(Buffer.from([0x9f, 0xc1, ...rng.bytes(rng.int(16))])), reason: 'protocolError' };
    case 6: {
      // Requests that never get answered in time: one past the limit.
      const many = Array.from({ length: MAX_IN_FLIGHT + 1 }, (_, i) => pack([3, i + 1, 'hold', null]));
      return { bytes: Buffer.concat(many), reason: 'tooManyInFlight' };
    }
    case 7:
      return { bytes: 'halfClose', reason: undefined };
    case 8:
      return { bytes: 'reset', reason: undefined };
    default:
      return { bytes: pack([3, 0, 'echo', null]), reason: 'protocolError' };
  }
}

interface Snapshot {
  readonly sessions: { sessions: number; handshaking: number; heldBytes: number }[];
  readonly counts: Record<string, number>;
  readonly rss: number;
}

let gateway: ChildApp | undefined;
afterEach(async () => {
  gateway?.kill();
  await gateway?.closed;
  gateway = undefined;
});

/** A connection that said Hello and got its Welcome (a client waits for it before anything else). */
function openSession(port: number, token: unknown): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let first = Buffer.alloc(0);
    let welcomed = false;
    // Read everything: a client that reads nothing is another test (slowConsumer).
    socket.on('data', (chunk: Buffer) => {
      if (welcomed) return;
      first = Buffer.concat([first, chunk]);
      if (first.length >= 5) {
        welcomed = true;
        if (first[4] === 0x96 && first[5] === 2) resolve(socket);
        else reject(new Error(`no Welcome: ${first.subarray(0, 16).toString('hex')}`));
      }
    });
    socket.on('error', () => undefined);
    socket.once('connect', () => socket.write(pack([1, 1, token])));
    socket.once('error', reject);
    socket.setTimeout(5000, () => reject(new Error('no Welcome within 5 s')));
  });
}

function closedOrTimeout(socket: Socket, ms: number): Promise<boolean> {
  if (socket.destroyed || socket.readyState === 'closed') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe('session listener fuzz', () => {
  it(
    `takes ${TOTAL} hostile frames without a crash, closing only the connections that broke the stream`,
    async () => {
      gateway = new ChildApp('session-gateway', 'e2e/session-gateway.app.js', {
        listener: {
          maxFrameBytes: MAX_FRAME,
          maxInFlight: MAX_IN_FLIGHT,
          helloTimeoutMs: 2000,
        },
      });
      const { port } = (await gateway.next('ready')) as unknown as { port: number };
      const bystander = new ZLinkSessionClient({ host: '127.0.0.1', port });
      await bystander.connect();
      let answered = 0;
      let bystanderFailed: unknown;
      let running = true;
      const bystanderLoop = (async () => {
        while (running) {
          try {
            expect(await bystander.request('echo', answered)).toBe(answered);
            answered++;
          } catch (error) {
            bystanderFailed = error;
            return;
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      })();

      const expected = new Map<string, number>();
      let frames = 0;
      let connections = 0;
      let notClosed = 0;
      const t0 = Date.now();
      // Connections in parallel, each worker with its own generator: a closed connection lingers
      // a little on the gateway (its Close frame's chance), which one at a time would spend as time.
      const worker = async (rng: Rng): Promise<void> => {
        while (frames < TOTAL) {
          const socket = await openSession(port, rng.chance(0.5) ? null : 'token');
          socket.setTimeout(0);
          connections++;
          // Fewer than the in-flight limit: these must never close the connection.
          const benignCount = rng.int(MAX_IN_FLIGHT - 4);
          const chunks: Buffer[] = [];
          for (let i = 0; i < benignCount; i++) chunks.push(benign(rng));
          frames += benignCount + 1;
          // Cut the stream at random points: the gateway must join frames split anywhere.
          const stream = Buffer.concat(chunks);
          for (let at = 0; at < stream.length;) {
            const n = 1 + rng.int(3000);
            socket.write(stream.subarray(at, at + n));
            at += n;
          }
          const fault = fatal(rng);
          if (fault.bytes === 'halfClose') socket.end();
          else if (fault.bytes === 'reset') socket.resetAndDestroy();
          else socket.write(fault.bytes);
          if (fault.reason) expected.set(fault.reason, (expected.get(fault.reason) ?? 0) + 1);
          if (!(await closedOrTimeout(socket, 5000))) notClosed++;
          socket.destroy();
        }
      };
      await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(new Rng(SEED + i))));
      const ms = Date.now() - t0;
      running = false;
      await bystanderLoop;
      expect(bystanderFailed).toBeUndefined();
      expect(await bystander.request('echo', 'after')).toBe('after');
      const snapshot = (await gateway.call({ type: 'snapshot' })) as unknown as Snapshot;
      process.stdout.write(
        `session fuzz: seed ${SEED}, ${frames} frames over ${connections} connections in ${ms} ms; ` +
          `bystander answered ${answered}; gateway RSS ${(snapshot.rss / 1048576).toFixed(1)} MB; ` +
          `counted ${JSON.stringify(Object.fromEntries(Object.entries(snapshot.counts).filter(([k]) => k.startsWith('session:'))))}\n`,
      );
      expect(notClosed).toBe(0);
      expect(gateway.running).toBe(true);
      for (const [reason, n] of expected) {
        // A fault that came before its connection's Hello is counted as a refusal, after it as a close.
        const counted =
          (snapshot.counts[`session:closed:${reason}`] ?? 0) +
          (snapshot.counts[`session:refused:${reason}`] ?? 0);
        expect({ reason, counted: counted >= n }).toEqual({ reason, counted: true });
      }
      const [listener] = snapshot.sessions;
      expect(listener).toMatchObject({ sessions: 1, handshaking: 0 });
      await bystander.close();
    },
    TIMEOUT_MS,
  );
});
