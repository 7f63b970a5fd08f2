/**
 * Admission and backpressure over real sockets: the source-local send queue bound, the process
 * job queue on the receiving side, and replies that need no job-queue permit.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import * as zmq from 'zeromq';
import {
  RecordKind,
  decodeFrame,
  encodeHello,
  encodePayload,
  encodeRequest,
} from '../../../lib/core/index.js';
import { Cleanup, EventCollector, sendWavesUntilTimeout, waitFor, within } from '../../helpers/index.js';
import { listen, startRuntime, waitForCandidates } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/** Counts handler executions and the most that ever ran at once. */
class Concurrency {
  running = 0;
  max = 0;
  started = 0;
  finished = 0;

  async run<T>(work: () => Promise<T>): Promise<T> {
    this.started++;
    this.running++;
    this.max = Math.max(this.max, this.running);
    try {
      return await work();
    } finally {
      this.running--;
      this.finished++;
    }
  }
}

describe('admission: a send completes when the source-local queue accepts the record; a full queue ends sends Timeout at their deadline', () => {
  it('with a tiny sendQueueLimit and a stalled server, sends end Timeout at their deadline instead of buffering without bound; stalled past the 3 s heartbeat limit, the connection stays and every accepted send is delivered once the server moves again', async () => {
    const gate = cleanup.gate();
    const seen = new Concurrency();
    const server = await startRuntime(
      cleanup,
      { handlerConcurrency: 1, clientServer: { billing: { server: { listen } } } },
      [['send', 'note', () => seen.run(() => gate.promise)]],
    );
    const limit = 4;
    const client = await startRuntime(cleanup, {
      sendQueueLimit: limit,
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);
    const clientEvents = cleanup.add(new EventCollector(client.events));
    const serverEvents = cleanup.add(new EventCollector(server.events));
    const startedAt = Date.now();

    const payload = 'x'.repeat(4096);
    const timeoutMs = 400;
    let maxQueued = 0;
    // Waves of concurrent sends until the queue stays full past a deadline (bounded: 200 000 sends).
    const { accepted, timedOut, others } = await sendWavesUntilTimeout(() => {
      const done = client.routeClient.sendToChannel('billing', 'note', payload).async({ timeoutMs });
      const queued = client.snapshot().channels[0]?.client?.connections[0]?.queued ?? 0;
      maxQueued = Math.max(maxQueued, queued);
      return done;
    }, 200_000);
    expect(others).toEqual([]);
    expect(timedOut.length).toBeGreaterThan(0);
    for (const t of timedOut) {
      expect(t.ms).toBeGreaterThanOrEqual(timeoutMs - 50);
      expect(t.ms).toBeLessThan(timeoutMs + 3000);
    }
    expect(maxQueued).toBeLessThanOrEqual(limit);
    expect(accepted).toBeGreaterThan(limit);
    // The server ran one handler and stopped reading: completion meant "queued here", not "handled".
    expect(seen.started).toBe(1);
    expect(server.snapshot().activeHandlers).toBe(1);

    // The server has stopped reading, so the client's ZMTP PINGs wait unanswered behind the records it
    // has not taken. Held past the client's 3 s heartbeat limit, the server's own PINGs keep it alive.
    await new Promise((r) => setTimeout(r, 4000));
    const stalledMs = Date.now() - startedAt;
    gate.open();
    await waitFor(
      () => seen.finished === accepted,
      30000,
      () =>
        `all ${accepted} accepted sends handled (handled ${seen.finished} after a ${stalledMs} ms stall; ` +
        `client events ${JSON.stringify(clientEvents.events.map((e) => e.type))}, ` +
        `server events ${JSON.stringify(serverEvents.events.map((e) => e.type))}, ` +
        `client ${JSON.stringify(client.snapshot().channels[0]?.client?.connections)})`,
    );
    expect(seen.max).toBe(1);
    expect(clientEvents.of('server_lost')).toEqual([]);
    // Nothing beyond what was accepted arrives.
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.started).toBe(accepted);
  }, 60000);
});

describe('job queue: the receiving side runs at most handlerConcurrency handlers at once and stops reading when the job queue is full', () => {
  it('handlerConcurrency 3: three handlers run, the rest wait unread; releasing them completes every request with at most 3 at once', async () => {
    const gate = cleanup.gate();
    const seen = new Concurrency();
    const server = await startRuntime(
      cleanup,
      { handlerConcurrency: 3, clientServer: { billing: { server: { listen } } } },
      [
        [
          'request',
          'work',
          (p) =>
            seen.run(async () => {
              await gate.promise;
              return p;
            }),
        ],
      ],
    );
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);

    const calls = Array.from({ length: 20 }, (_, i) =>
      client.routeClient.requestToChannel('billing', 'work', i).async<number>({ timeoutMs: 20000 }),
    );
    await waitFor(() => seen.started === 3, 5000, 'three handlers running');
    expect(server.snapshot().activeHandlers).toBe(3);

    // The listener no longer reads its socket: a new client's hello stays unanswered until a permit frees.
    const dealer = cleanup.add(new zmq.Dealer({ linger: 0 }));
    dealer.connect(server.endpoint('billing') as string);
    await dealer.send(encodeHello('billing', 'late-client'));
    await dealer.send(encodeRequest(91, 'work', undefined, encodePayload('raw')));
    const welcome = dealer.receive();
    const early = await Promise.race([
      welcome.then(() => 'answered'),
      new Promise((r) => setTimeout(() => r('unanswered'), 300)),
    ]);
    expect(early).toBe('unanswered');
    expect(seen.started).toBe(3);

    gate.open();
    await expect(Promise.all(calls)).resolves.toEqual(Array.from({ length: 20 }, (_, i) => i));
    const [frame] = await within(welcome, 5000, 'welcome after the queue drained');
    expect(decodeFrame(frame as Buffer).records[0]?.kind).toBe(RecordKind.Welcome);
    expect(seen.max).toBe(3);
    await waitFor(() => seen.finished === 21, 5000, 'the raw request too');
  });
});

describe('a reply acquires no Application Job Queue permit', () => {
  it('a handler holding the only permit (handlerConcurrency 1) awaits a downstream request; its reply still completes it', async () => {
    const back = await startRuntime(cleanup, { clientServer: { ledger: { server: { listen } } } }, [
      ['request', 'balance', (p) => `balance of ${String(p)}`],
    ]);
    const seen = new Concurrency();
    const front = await startRuntime(
      cleanup,
      {
        handlerConcurrency: 1,
        clientServer: {
          billing: { server: { listen } },
          ledger: { client: { connect: [back.endpoint('ledger') as string] } },
        },
      },
      [
        [
          'request',
          'charge',
          (p) =>
            seen.run(async () => {
              // The only job permit of this process is held here while the reply travels back.
              const balance = await front.routeClient
                .requestToChannel('ledger', 'balance', p)
                .async<string>({ timeoutMs: 5000 });
              return { charged: p, balance };
            }),
        ],
      ],
    );
    await waitForCandidates(front, 'ledger', 1);
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [front.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);

    const replies = await Promise.all(
      ['alice', 'bob', 'carol'].map((who) =>
        client.routeClient.requestToChannel('billing', 'charge', who).async({ timeoutMs: 10000 }),
      ),
    );
    expect(replies).toEqual([
      { charged: 'alice', balance: 'balance of alice' },
      { charged: 'bob', balance: 'balance of bob' },
      { charged: 'carol', balance: 'balance of carol' },
    ]);
    expect(seen.max).toBe(1);
  });
});
