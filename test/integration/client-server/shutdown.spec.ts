/**
 * Shutdown (docs/errors.md#which-call-can-end-with-what): runtime.close() ends pending requests and new calls with Shutdown, never hangs,
 * and leaves nothing running behind.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Cleanup, freePort, outcome, waitFor, within } from '../../helpers/index.js';
import { LOCAL, listen, startRuntime, waitForCandidates } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/** A server whose `slow` handler waits on a gate that only cleanup opens, and a ready client of it. */
async function stalledServerAndClient() {
  const gate = cleanup.gate();
  const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
    ['request', 'slow', () => gate.promise],
  ]);
  const client = await startRuntime(cleanup, {
    clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
  });
  await waitForCandidates(client, 'billing', 1);
  return { server, client };
}

describe('shutdown: runtime.close() ends pending requests with Shutdown and new calls with Shutdown', () => {
  it('pending requests end Shutdown at close; sends and requests started afterwards end Shutdown', async () => {
    const { server, client } = await stalledServerAndClient();

    const pending = Array.from({ length: 5 }, (_, i) =>
      outcome(client.routeClient.requestToChannel('billing', 'slow', i).async({ timeoutMs: 10000 })),
    );
    await waitFor(() => server.snapshot().activeHandlers === 5, 5000, 'five handlers running');
    await within(client.close(), 5000, 'client close');
    for (const r of await within(Promise.all(pending), 1000, 'pending requests'))
      expect(r).toMatchObject({ ok: false, code: 'Shutdown' });
    expect(client.snapshot().pendingRequests).toBe(0);

    await expect(client.routeClient.requestToChannel('billing', 'slow', 1).async()).rejects.toMatchObject({
      code: 'Shutdown',
    });
    await expect(client.routeClient.sendToChannel('billing', 'slow', 1).async()).rejects.toMatchObject({
      code: 'Shutdown',
    });
    // Closing again is harmless.
    await within(client.close(), 1000, 'second close');
  });

  it.each([0, 1, 2, 5])(
    'a request started %i microtask(s) before close() ends Shutdown at once, not at its timeout',
    async (ticks) => {
      const { client } = await stalledServerAndClient();
      const started = Date.now();
      const call = outcome(
        client.routeClient.requestToChannel('billing', 'slow', 1).async({ timeoutMs: 10000 }),
      );
      for (let i = 0; i < ticks; i++) await Promise.resolve();
      await within(client.close(), 5000, 'client close');
      expect(await within(call, 2000, 'the request')).toMatchObject({ ok: false, code: 'Shutdown' });
      expect(Date.now() - started).toBeLessThan(5000);
    },
  );

  it('a call still waiting for a ready server ends Shutdown at close, not NotFound at its deadline', async () => {
    const port = await freePort();
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [`tcp://${LOCAL}:${port}`] } } },
    });
    const request = outcome(
      client.routeClient.requestToChannel('billing', 'x', 1).async({ timeoutMs: 4000 }),
    );
    const send = outcome(client.routeClient.sendToChannel('billing', 'x', 1).async({ timeoutMs: 4000 }));
    await new Promise((r) => setTimeout(r, 50)); // both are in the candidate wait now
    await within(client.close(), 5000, 'close');
    const [r, s] = await within(Promise.all([request, send]), 1000, 'the waiting calls');
    expect(r).toMatchObject({ ok: false, code: 'Shutdown' });
    expect(s).toMatchObject({ ok: false, code: 'Shutdown' });
  });

  it('a send waiting for space in a full source-local queue ends Shutdown at close', async () => {
    const gate = cleanup.gate();
    const server = await startRuntime(
      cleanup,
      { handlerConcurrency: 1, clientServer: { billing: { server: { listen } } } },
      [['send', 'note', () => gate.promise]],
    );
    const client = await startRuntime(cleanup, {
      sendQueueLimit: 2,
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);
    const payload = 'x'.repeat(4096);
    let waiting: Promise<unknown>[] = [];
    // Waves of sends until one wave stays unfinished: its sends wait for queue space (bounded).
    for (let wave = 0; wave < 3000 && waiting.length === 0; wave++) {
      const sends = Array.from({ length: 64 }, () =>
        outcome(client.routeClient.sendToChannel('billing', 'note', payload).async({ timeoutMs: 20000 })),
      );
      const all = Promise.all(sends);
      const finished = await Promise.race([
        all.then(() => true),
        new Promise((r) => setTimeout(() => r(false), 200)),
      ]);
      if (!finished) waiting = sends;
    }
    expect(waiting.length).toBeGreaterThan(0);
    await within(client.close(), 5000, 'client close');
    const results = (await within(Promise.all(waiting), 1000, 'the waiting sends')) as {
      ok: boolean;
      code?: string;
    }[];
    const failed = results.filter((r) => !r.ok);
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) expect(r.code).toBe('Shutdown');
  }, 60000);

  it('closing a server whose job queue is full and whose handlers never finish does not hang', async () => {
    const never = cleanup.gate();
    let started = 0;
    const server = await startRuntime(
      cleanup,
      { handlerConcurrency: 1, clientServer: { billing: { server: { listen } } } },
      [
        [
          'request',
          'stuck',
          () => {
            started++;
            return never.promise;
          },
        ],
      ],
    );
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);
    const calls = Array.from({ length: 3 }, () =>
      outcome(client.routeClient.requestToChannel('billing', 'stuck', 1).async({ timeoutMs: 10000 })),
    );
    await waitFor(() => started === 1, 5000, 'the one handler running');
    await new Promise((r) => setTimeout(r, 50)); // the listener now waits for a job permit
    await within(server.close(), 3000, 'server close with a full job queue');
    for (const r of await within(Promise.all(calls), 5000, 'the calls'))
      expect(r).toMatchObject({ ok: false, code: 'RouteError' });
    expect(started).toBe(1);
  });

  it('after close, nothing the runtimes started keeps the process alive (no timer or handle left)', async () => {
    // zeromq sockets do not show up here (jest --detectOpenHandles covers the suite); timers do:
    // hello retries, candidate waits, request deadlines, drain polls.
    const baseline = process.getActiveResourcesInfo().length;
    const server = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen }, client: {} } } },
      [['request', 'echo', (p) => p]],
    );
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);
    await waitForCandidates(server, 'billing', 1);
    await client.routeClient.requestToChannel('billing', 'echo', 1).async();
    await server.routeClient.requestToChannel('billing', 'echo', 1).async();
    await within(Promise.all([client.close(), server.close()]), 5000, 'close');
    await waitFor(() => process.getActiveResourcesInfo().length <= baseline, 2000, 'resources released');
  });
});
