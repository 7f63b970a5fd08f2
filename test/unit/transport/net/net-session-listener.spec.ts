import { Buffer } from 'node:buffer';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Packr } from 'msgpackr';
import {
  type SessionLink,
  type SessionLinkHandler,
  SessionFrameKind,
  SESSION_PROTOCOL_VERSION,
  ZLinkEvents,
  frame,
  normalizeOptions,
} from '../../../../lib/core/index.js';
import { NetSessionListener } from '../../../../lib/transport/net/index.js';

/**
 * The `node:net` session listener's own parts, over loopback: the client's address on the link, and
 * backpressure from the socket — a client that reads nothing is closed `slowConsumer` once what waits
 * for it (the listener's frames and the socket's `writableLength`) passes `maxPendingBytes`, and the
 * most held for it never passes the limit plus one frame.
 */

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
const framed = (items: unknown[]): Buffer => Buffer.from(frame(new Uint8Array(packr.pack(items))));
const LIMIT = 64 * 1024;
const PUSH = Buffer.alloc(8192, 7);
const turn = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

const options = normalizeOptions({
  locationStore: { redis: 'redis://127.0.0.1:6379' },
  meshes: { world: { objectRole: 'client' } },
  sessions: {
    players: { mesh: 'world', listen: { bindHost: '127.0.0.1' }, maxPendingBytes: LIMIT },
  },
}).sessions.get('players');

let listener: NetSessionListener | undefined;
let client: Socket | undefined;
afterEach(async () => {
  client?.destroy();
  await listener?.close();
  listener = undefined;
});

/** A bound listener whose handler welcomes every Hello, and a client that sent one. */
async function welcomed(): Promise<{
  link: SessionLink;
  closed: string[];
  socket: Socket;
  events: ZLinkEvents;
}> {
  let opened: SessionLink | undefined;
  const closed: string[] = [];
  const handler: SessionLinkHandler = {
    opened(link) {
      opened = link;
      link.welcome('s-1');
    },
    request() {},
    send() {},
    closed: (_link, reason) => closed.push(reason),
  };
  const events = new ZLinkEvents();
  listener = new NetSessionListener(
    { options: options!, handler, events, count: { open: 0 } },
    options!.listen[0]!,
  );
  await listener.bind();
  const port = Number((listener.localEndpoint as string).split(':').pop());
  const socket = connect({ host: '127.0.0.1', port });
  client = socket;
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(framed([SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, 'ticket']));
  for (let i = 0; i < 200 && opened === undefined; i++) await turn(5);
  return { link: opened as SessionLink, closed, socket, events };
}

describe('the node:net session listener', () => {
  it("keeps the client's address on the link", async () => {
    const { link, socket } = await welcomed();
    expect(link.remoteAddress).toEqual({ address: '127.0.0.1', port: socket.localPort, family: 'IPv4' });
  });

  it('closes a client that reads nothing slowConsumer, holding at most the limit plus a frame', async () => {
    const { link, closed, socket } = await welcomed();
    socket.pause();
    // Pushes a turn at a time until the session closes: the kernel's buffers fill, then the socket's.
    for (let i = 0; i < 2000 && link.open; i++) {
      for (let j = 0; j < 8 && link.open; j++) link.push('flood', PUSH);
      await turn(1);
    }
    expect(link.open).toBe(false);
    expect(closed).toEqual(['slowConsumer']);
    const snapshot = (listener as NetSessionListener).snapshot();
    expect(snapshot.peakConnectionBytes).toBeGreaterThan(LIMIT);
    expect(snapshot.peakConnectionBytes).toBeLessThanOrEqual(LIMIT + PUSH.length + 64);
    expect(snapshot.sessions + snapshot.handshaking).toBe(0);
    // Ended at once, not behind the bytes the client never read: it sees the end once it reads on.
    const ended = new Promise<string>((resolve) => {
      socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      socket.on('close', () => resolve('closed'));
    });
    socket.resume();
    expect(['ECONNRESET', 'closed']).toContain(await ended);
  });

  it('closes promptly with a socket its connection list forgot (a tombstone swept while it ends)', async () => {
    const { socket } = await welcomed();
    socket.pause();
    (listener as unknown as { connections: Map<string, unknown> }).connections.clear();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const t0 = Date.now();
    await (listener as NetSessionListener).close();
    listener = undefined;
    expect(Date.now() - t0).toBeLessThan(1000);
    socket.resume();
    await closed;
  });
});
