/**
 * The pump's answer to a send that timed out at the high-water mark (`SEND_RECHECK_MS`): zeromq.js
 * can miss the wake-up of a blocked send, so a blocking socket sets a `sendTimeout` and a write that
 * ends EAGAIN is written again — once it goes, every record arrives once and in order. A socket that
 * does not allow it (a replaced DEALER, a ROUTER) keeps the old rule: the write is given up.
 */
import { describe, expect, it } from '@jest/globals';
import { FIRST_BATCH, type SendableSocket, SocketPump } from '../../../../lib/transport/io/socket-pump.js';
import { waitFor } from '../../../helpers/index.js';

const eagain = (): Error => Object.assign(new Error('Socket temporarily unavailable'), { code: 'EAGAIN' });

/** Fails the first `failures` sends with EAGAIN, then takes them; records what it took. */
class FlakySocket implements SendableSocket {
  readonly taken: Buffer[] = [];
  attempts = 0;
  constructor(
    private failures: number,
    private readonly retry: boolean,
  ) {}
  send(message: Uint8Array | (Uint8Array | Buffer)[]): Promise<void> {
    this.attempts++;
    if (this.failures > 0) {
      this.failures--;
      return new Promise((_, reject) => setTimeout(() => reject(eagain()), 5));
    }
    this.taken.push(Buffer.from(message as Uint8Array));
    return Promise.resolve();
  }
  mayRetry(error: unknown): boolean {
    return this.retry && (error as { code?: unknown }).code === 'EAGAIN';
  }
}

const record = (n: number): Uint8Array => Uint8Array.of(n);

describe('SocketPump: a send that timed out (EAGAIN) is written again when the socket allows it', () => {
  it('three timeouts in a row, then the write goes: each record once, in order, and the queue drains', async () => {
    const socket = new FlakySocket(3, true);
    const pump = new SocketPump(socket, 16, 'test');
    pump.offer(record(1));
    pump.offer(record(2));
    await waitFor(() => socket.taken.length > 0 && pump.queued === 0, 5000, 'the first batch taken');
    pump.offer(record(3));
    await waitFor(() => Buffer.concat(socket.taken).length === 3, 5000, 'all three records taken');
    expect([...Buffer.concat(socket.taken)]).toEqual([1, 2, 3]);
    expect(socket.attempts).toBe(3 + socket.taken.length);
    pump.close();
  });

  it('a socket that does not allow it gives the write up, as before, and goes on with the next one', async () => {
    const socket = new FlakySocket(1, false);
    const pump = new SocketPump(socket, 16, 'test');
    pump.offer(record(1));
    await waitFor(() => socket.attempts === 1 && pump.queued === 0, 5000, 'the first write tried');
    await new Promise((r) => setTimeout(r, 20));
    pump.offer(record(2));
    await waitFor(() => socket.taken.length === 1, 5000, 'the second write taken');
    expect([...Buffer.concat(socket.taken)]).toEqual([2]);
  });

  it('a closed pump stops retrying', async () => {
    const socket = new FlakySocket(1_000_000, true);
    const pump = new SocketPump(socket, 16, 'test');
    pump.offer(record(1));
    await waitFor(() => socket.attempts >= 2, 5000, 'a retry');
    pump.close();
    const after = socket.attempts;
    await new Promise((r) => setTimeout(r, 50));
    expect(socket.attempts).toBeLessThanOrEqual(after + 1);
  });
});

/** Takes every write at once; records each message's bytes. */
class TakingSocket implements SendableSocket {
  readonly messages: number[][] = [];
  send(message: Uint8Array | (Uint8Array | Buffer)[]): Promise<void> {
    this.messages.push([...(message as Uint8Array)]);
    return Promise.resolve();
  }
}

describe('SocketPump: the first message of a drain lets the peer begin', () => {
  it(`a burst of replies from idle leaves as ${FIRST_BATCH} records, then the rest in one message, in order`, async () => {
    const socket = new TakingSocket();
    const pump = new SocketPump(socket, 1000, 'test');
    for (let i = 0; i < 200; i++) pump.force(record(i));
    await waitFor(() => pump.queued === 0 && socket.messages.length === 2, 5000, 'two messages');
    expect(socket.messages.map((m) => m.length)).toEqual([FIRST_BATCH, 200 - FIRST_BATCH]);
    expect(socket.messages.flat()).toEqual(Array.from({ length: 200 }, (_, i) => i));
    // A burst no larger than FIRST_BATCH is still one message.
    for (let i = 0; i < FIRST_BATCH; i++) pump.force(record(i));
    await waitFor(() => socket.messages.length === 3, 5000, 'a third message');
    expect(socket.messages[2]).toHaveLength(FIRST_BATCH);
    pump.close();
  });

  it('a burst of calls (offer) leaves whole, and so do replies queued behind it', async () => {
    const socket = new TakingSocket();
    const pump = new SocketPump(socket, 1000, 'test');
    for (let i = 0; i < 100; i++) pump.offer(record(i));
    for (let i = 100; i < 200; i++) pump.force(record(i));
    await waitFor(() => pump.queued === 0 && socket.messages.length > 0, 5000, 'a message');
    expect(socket.messages.map((m) => m.length)).toEqual([200]);
    pump.close();
  });
});
