/**
 * The libzmq 4.3.5 abort behind issue 27, reached by ordinary traffic: a ClientServer server whose
 * handlers are all busy stops reading, libzmq stops reading the client's connection once its pipe is
 * full, and the client then resets that connection. With ZMTP heartbeats on, the server's next
 * heartbeat PING asserted `!_io_error` and the whole server process aborted about a second later.
 * Here the server runs in a child process and the client is a raw TCP connection speaking ZMTP, so
 * the test controls exactly what reaches the server and when the reset comes; the server must stay
 * up, finish the work it accepted, and serve a proper client afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeHello, encodePayload, encodeRequest } from '../../lib/core/index.js';
import { ZLinkRuntime } from '../../lib/index.js';
import { ChildApp, type ChildMessage, readLog } from '../helpers/child-app.js';
import { Cleanup, waitFor } from '../helpers/index.js';

const HELD = 3000;

/** One ZMTP message of one frame (long form when it needs it). */
function frame(body: Uint8Array): Buffer {
  if (body.length < 256) return Buffer.concat([Buffer.from([0x00, body.length]), body]);
  const head = Buffer.alloc(9);
  head[0] = 0x02;
  head.writeBigUInt64BE(BigInt(body.length), 1);
  return Buffer.concat([head, body]);
}

/** A plain ZMTP 3.1 greeting, as a client. */
function greeting(): Buffer {
  const g = Buffer.alloc(64);
  g[0] = 0xff;
  g[9] = 0x7f;
  g[10] = 3;
  g[11] = 1;
  g.write('NULL', 12);
  return g;
}

/** A DEALER's READY: what a ZLink client's DEALER sends after the greetings. */
function dealerReady(): Buffer {
  const name = 'Socket-Type';
  const prop = Buffer.alloc(1 + name.length + 4);
  prop[0] = name.length;
  prop.write(name, 1);
  prop.writeUInt32BE(6, 1 + name.length);
  const body = Buffer.concat([Buffer.from('\x05READY'), prop, Buffer.from('DEALER')]);
  return Buffer.concat([Buffer.from([0x04, body.length]), body]);
}

describe('a stalled server whose client resets its connection (plain ZMTP)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zlink-stalled-'));
  const log = join(dir, 'ran.log');
  const cleanup = new Cleanup();
  let server: ChildApp;
  let ready: ChildMessage;

  beforeAll(async () => {
    server = new ChildApp('billing-a', 'e2e/billing-server.app.js', {
      rid: 'billing-a',
      weight: 100,
      executionLog: log,
    });
    ready = await server.next('ready');
  }, 30000);

  afterAll(async () => {
    await cleanup.closeAll();
    if (server?.running) {
      server.send({ type: 'shutdown' });
      await server.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }, 30000);

  it('stays up, finishes what it accepted, and serves a client afterwards', async () => {
    const endpoint = ready.endpoint as string;
    const socket = connect(Number(endpoint.slice(endpoint.lastIndexOf(':') + 1)), '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // Greetings first, as libzmq does: the server answers its own once it has read ours.
    let answered = 0;
    const greeted = new Promise<void>((resolve) =>
      socket.on('data', (d: Buffer) => {
        answered += d.length;
        if (answered >= 64) resolve();
      }),
    );
    socket.write(greeting());
    await greeted;
    // Far more held requests than the server has permits, then more than its pipe holds (1000 messages).
    const hold = (i: number) =>
      frame(
        encodeRequest(
          i + 1,
          'billing.hold',
          undefined,
          encodePayload({ orderId: `held-${i}`, holdMs: HELD }),
        ),
      );
    const requests = Array.from({ length: 5000 }, (_, i) => hold(i));
    socket.write(Buffer.concat([dealerReady(), frame(encodeHello('billing', 'raw-client')), ...requests]));
    await waitFor(() => readLog(log).length > 0, 10000, 'the server to take the first requests');
    await new Promise((r) => setTimeout(r, 300));
    socket.resetAndDestroy();
    // A heartbeat PING a second after the reset used to abort the server here.
    await new Promise((r) => setTimeout(r, HELD + 2000));
    expect(server.running).toBe(true);

    const runtime = cleanup.add(
      new ZLinkRuntime({ clientServer: { billing: { client: { connect: [endpoint] } } } }),
    );
    await runtime.start();
    await runtime.waitForCandidates('billing', 1, 15000);
    const reply = await runtime.routeClient
      .requestToChannel('billing', 'billing.charge', { orderId: 'after' })
      .async<{ orderId: string }>({ timeoutMs: 15000 });
    expect(reply.orderId).toBe('after');
    expect(readLog(log)).toContain('after');
    expect(server.running).toBe(true);
  }, 60000);
});
