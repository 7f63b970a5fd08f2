import { Buffer } from 'node:buffer';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type SessionLinkHandler, ZLinkEvents, normalizeOptions } from '../../../../lib/core/index.js';
import { SessionListener } from '../../../../lib/transport/stream/index.js';
import type { StreamConnection } from '../../../../lib/transport/stream/stream-connection.js';

/**
 * The listener's writer: a connection ended while one of its writes is in zeromq's hands (a
 * `slowConsumer` close comes from a write, while the writer may be on that very connection), and the
 * `maxPendingBytes` check. The zeromq socket is replaced by one whose sends this test settles, to hold
 * a send in flight; the rest is the real listener and connection.
 */

interface Send {
  readonly message: Buffer[];
  settle(error?: Error): void;
}

class HeldSocket {
  readonly sends: Send[] = [];
  send(message: Buffer[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.sends.push({ message, settle: (error) => (error ? reject(error) : resolve()) });
    });
  }
  close(): void {}
}

const eagain = (): Error => Object.assign(new Error('Socket temporarily unavailable'), { code: 'EAGAIN' });
const turn = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

const handler: SessionLinkHandler = { opened() {}, request() {}, send() {}, closed() {} };
const options = normalizeOptions({
  locationStore: { redis: 'redis://127.0.0.1:6379' },
  meshes: { world: { objectRole: 'client' } },
  sessions: { players: { mesh: 'world', maxPendingBytes: 64 * 1024 } },
}).sessions.get('players');

interface Inside {
  socket: { close(): void } | HeldSocket;
  accept(id: Buffer, key: string): void;
  connections: Map<string, StreamConnection>;
}

let listener: SessionListener | undefined;
afterEach(() => {
  listener = undefined;
});

/** A listener on a held socket with one accepted connection, and a first write of 100 bytes in flight. */
async function inFlight(): Promise<{
  socket: HeldSocket;
  connection: StreamConnection;
  listener: SessionListener;
}> {
  listener = new SessionListener({ options: options!, handler, events: new ZLinkEvents() });
  const inside = listener as unknown as Inside;
  inside.socket.close();
  const socket = new HeldSocket();
  inside.socket = socket;
  const id = Buffer.from([0, 0, 0, 0, 1]);
  inside.accept(id, id.toString('latin1'));
  const connection = inside.connections.get(id.toString('latin1')) as StreamConnection;
  listener.write(connection, Buffer.alloc(100, 1));
  await turn();
  expect(socket.sends).toHaveLength(1);
  expect(socket.sends[0]?.message[1]?.length).toBe(100);
  return { socket, connection, listener };
}

describe('ending a connection while its write is in flight', () => {
  it('a refused write is dropped and the empty message goes alone, so the disconnect is sent', async () => {
    const { socket, connection } = await inFlight();
    connection.close('slowConsumer', 'test');
    socket.sends[0]?.settle(eagain());
    // The refused write is retried after SESSION_RETRY_WRITE_MS (10 ms).
    for (let i = 0; i < 50 && socket.sends.length < 2; i++) await turn(10);
    expect(socket.sends).toHaveLength(2);
    expect(socket.sends[1]?.message[1]?.length).toBe(0);
    socket.sends[1]?.settle();
    await turn(30);
    expect(socket.sends).toHaveLength(2);
    expect(connection.pendingBytes).toBe(0);
    expect(connection.hasWrite).toBe(false);
  });

  it('an accepted write leaves the count at 0 (never below), then the empty message goes', async () => {
    const { socket, connection } = await inFlight();
    connection.close('slowConsumer', 'test');
    socket.sends[0]?.settle();
    await turn();
    expect(connection.pendingBytes).toBe(0);
    expect(socket.sends).toHaveLength(2);
    expect(socket.sends[1]?.message[1]?.length).toBe(0);
    socket.sends[1]?.settle();
    await turn();
    expect(connection.heldBytes).toBeGreaterThanOrEqual(0);
  });

  it('a refused empty message is tried again until zeromq takes it', async () => {
    const { socket, connection } = await inFlight();
    socket.sends[0]?.settle();
    await turn();
    connection.close('slowConsumer', 'test');
    await turn();
    expect(socket.sends[1]?.message[1]?.length).toBe(0);
    socket.sends[1]?.settle(eagain());
    for (let i = 0; i < 50 && socket.sends.length < 3; i++) await turn(10);
    expect(socket.sends[2]?.message[1]?.length).toBe(0);
    socket.sends[2]?.settle();
  });
});

describe('the Close frame is not refused by maxPendingBytes', () => {
  it('a close for another reason writes its Close frame even past the limit', async () => {
    const { socket, connection, listener: l } = await inFlight();
    // Past the limit in the connection's own buffer (the in-flight write is still unanswered).
    connection.pendingBytes = 64 * 1024 + 1;
    const seen: string[] = [];
    (l as unknown as { config: { events: ZLinkEvents } }).config.events.subscribe((e) => {
      if (e.type === 'session') seen.push(String((e as { reason?: string }).reason));
    });
    connection.close('protocolError', 'test');
    expect(seen).toEqual(['protocolError']);
    expect(connection.out.at(-1)?.length).toBeGreaterThan(0);
    socket.sends[0]?.settle();
  });
});

describe('maxPendingBytes counts what a connection held before the frame', () => {
  it('a client that took everything is not closed by a large frame after a burst', async () => {
    const { socket, connection } = await inFlight();
    // A burst the client reads at once: every write zeromq is handed is taken (each send settles).
    listener!.write(connection, Buffer.alloc(20000, 2));
    for (let settled = 0; settled < socket.sends.length; settled++) {
      socket.sends[settled]?.settle();
      await turn();
    }
    expect(connection.pendingBytes).toBe(0);
    // What zeromq may still hold stays counted (the last 17 writes: about a quarter of the limit).
    expect(connection.handed.bytes).toBeGreaterThan(15000);
    // 50 KB, under the 64 KiB limit by itself: it waits, the session stays open.
    listener!.write(connection, Buffer.alloc(50000, 3));
    expect(connection.open).toBe(true);
    // One more frame now finds more than the limit waiting: that one closes it.
    listener!.write(connection, Buffer.alloc(1000, 4));
    expect(connection.open).toBe(false);
  });
});
