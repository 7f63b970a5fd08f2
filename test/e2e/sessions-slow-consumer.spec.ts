/**
 * A slow consumer is dropped, not just closed (issue 51): a gateway in its own process pushes 8 KB
 * pushes, 32 a turn, to a client on a real TCP socket that stops reading. The session is closed
 * `slowConsumer` (`maxPendingBytes` 1 MiB); then
 *
 * - the connection is really gone within one heartbeat of that close: when the client reads again, it
 *   gets what its own kernel buffered and then the end of the stream (EOF or a reset), not megabytes
 *   more from the gateway;
 * - the gateway's RSS (read by the gateway itself, `process.memoryUsage().rss`) never grew by more than
 *   a few MiB over its baseline while it held the client's bytes: `maxPendingBytes` (+ one write) in its
 *   own buffer and in zeromq's together, and garbage the pushes leave until a collection.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect, type Socket } from 'node:net';
import { Packr } from 'msgpackr';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';

const MiB = 1024 * 1024;
const HEARTBEAT_MS = 2000;
/**
 * What the gateway may hold for the client (1 MiB), plus the garbage of what it pushed before the close
 * (the client's and the gateway's kernel buffers took some MiB first) and allocator slack: +10 MiB measured
 * with the fix, +34 MiB before it (zeromq held 64 messages of up to a turn's pushes each).
 */
const RSS_GROWTH_BOUND = 20 * MiB;

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
const frame = (items: unknown[]): Buffer => {
  const body = packr.pack(items);
  const out = Buffer.alloc(4 + body.length);
  out.writeUInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
};

let gateway: ChildApp | undefined;
let client: Socket | undefined;
afterEach(async () => {
  client?.destroy();
  if (gateway?.running) gateway.kill('SIGKILL');
  await gateway?.exited;
  gateway = undefined;
});

interface Snapshot extends ChildMessage {
  readonly rss: number;
  readonly counts: Record<string, number>;
}

async function snapshot(app: ChildApp): Promise<Snapshot> {
  app.send({ type: 'snapshot' });
  return (await app.next('snapshot', 15000)) as Snapshot;
}

/** Resolves once `socket` has received at least `n` bytes in all (bounded). */
function readAtLeast(socket: Socket, got: () => number, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${got()} of ${n} bytes within 15 s`)), 15000);
    const check = (): void => {
      if (got() < n) return;
      clearTimeout(timer);
      socket.off('data', check);
      resolve();
    };
    socket.on('data', check);
    check();
  });
}

describe('a slow consumer (gateway in its own process, client over TCP)', () => {
  it('is dropped within one heartbeat of its close, and the gateway holds no more than maxPendingBytes for it', async () => {
    gateway = new ChildApp('gateway', 'e2e/session-gateway.app.js', {
      listener: { maxPendingBytes: MiB, heartbeatMs: HEARTBEAT_MS },
    });
    const { port } = await gateway.next('ready', 60000);
    const before = await snapshot(gateway);

    const socket = connect({ host: '127.0.0.1', port: port as number });
    client = socket;
    let received = 0;
    let ended: string | undefined;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('end', () => (ended ??= 'EOF'));
    socket.on('error', (error: NodeJS.ErrnoException) => (ended ??= error.code ?? error.message));
    socket.on('close', () => (ended ??= 'closed'));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(frame([1, 1, 'ticket']));
    // The Welcome and the reply to `flood` (a few dozen bytes each), then the client stops reading.
    await readAtLeast(socket, () => received, 20);
    socket.write(frame([3, 1, 'flood', { bytes: 8192, burst: 32 }]));
    await readAtLeast(socket, () => received, 40);
    socket.pause();

    // Until the gateway closes it `slowConsumer`, then a heartbeat longer: the gateway's RSS throughout.
    let peakRss = before.rss;
    let closedAt: number | undefined;
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline) {
      const s = await snapshot(gateway);
      peakRss = Math.max(peakRss, s.rss);
      if (closedAt === undefined && (s.counts['session:closed:slowConsumer'] ?? 0) >= 1)
        closedAt = Date.now();
      if (closedAt !== undefined && Date.now() - closedAt >= HEARTBEAT_MS) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(closedAt).toBeDefined();
    const growth = peakRss - before.rss;
    console.log(
      `slow consumer: gateway RSS ${(before.rss / MiB).toFixed(1)} MiB before, peak ${(peakRss / MiB).toFixed(1)} MiB ` +
        `(+${(growth / MiB).toFixed(1)} MiB)`,
    );

    // One heartbeat after the close the client reads again: its kernel's buffer, then the end.
    const readBefore = received;
    socket.resume();
    const end = Date.now() + 10000;
    while (ended === undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const readAfter = received - readBefore;
    console.log(
      `slow consumer: the client read ${(readAfter / MiB).toFixed(2)} MiB after resuming; end: ${ended}`,
    );
    expect(ended).toBeDefined();
    // Its own kernel's receive buffer and the gateway's send buffer at most, never megabytes from zeromq.
    expect(readAfter).toBeLessThan(8 * MiB);
    expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
  }, 90000);
});
