/**
 * Drain (docs/protocol.md#drain) over real sockets: clients learn the draining state on the connection, new calls go
 * elsewhere, racing requests end finitely, and accepted work finishes before the listener closes.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, outcome, waitFor, within } from '../../helpers/index.js';
import { listen, startRuntime, waitForCandidates } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

async function twoServersAndClient(handler: (name: string) => (p: unknown) => unknown) {
  const s1 = await startRuntime(cleanup, { clientServer: { billing: { server: { listen, rid: 's1' } } } }, [
    ['request', 'work', handler('S1')],
  ]);
  const s2 = await startRuntime(cleanup, { clientServer: { billing: { server: { listen, rid: 's2' } } } }, [
    ['request', 'work', handler('S2')],
  ]);
  const client = await startRuntime(cleanup, {
    clientServer: {
      billing: { client: { connect: [s1.endpoint('billing') as string, s2.endpoint('billing') as string] } },
    },
  });
  await waitForCandidates(client, 'billing', 2);
  return { s1, s2, client };
}

function work(client: ZLinkRuntime, p: unknown, timeoutMs = 10000) {
  return client.routeClient.requestToChannel('billing', 'work', p).async<string>({ timeoutMs });
}

describe('drain: clients see draining, new calls go to the other server, in-flight handlers finish before the listener closes', () => {
  it('runtime.drain() on a server → server_state draining at the client, new calls to the other server, the in-flight request completes, then the listener closes', async () => {
    const gate = cleanup.gate();
    let inFlightFinished = false;
    const { s1, client } = await twoServersAndClient((name) => async (p) => {
      if (p === 'slow') {
        await gate.promise;
        inFlightFinished = true;
      }
      return name;
    });
    const events = cleanup.add(new EventCollector(client.events));
    const serverEvents = cleanup.add(new EventCollector(s1.events));

    // Equal weights: the first call goes to the smaller rid, s1, and stalls there.
    const inFlight = work(client, 'slow');
    await waitFor(() => s1.snapshot().activeHandlers === 1, 5000, 'the slow handler running on s1');

    let drained = false;
    let finishedWhenDrained: boolean | undefined;
    const drain = s1.drain().then(() => {
      drained = true;
      finishedWhenDrained = inFlightFinished;
    });
    const state = await events.next('server_state', (e) => e.serverRid === 's1' && e.draining);
    expect(state).toMatchObject({ channel: 'billing', generation: s1.generation });
    await serverEvents.next('drain', (e) => e.phase === 'started');
    await waitForCandidates(client, 'billing', 1);

    const next = [];
    for (let i = 0; i < 6; i++) next.push(await work(client, i));
    expect(next).toEqual(Array(6).fill('S2'));

    // Accepted work keeps the listener open.
    expect(drained).toBe(false);
    expect(s1.snapshot().channels[0]?.server?.draining).toBe(true);
    gate.open();
    await expect(inFlight).resolves.toBe('S1');
    await within(drain, 5000, 'drain');
    expect(finishedWhenDrained).toBe(true);
    expect(serverEvents.of('drain').map((e) => e.phase)).toEqual(['started', 'completed']);
    // The listener is gone: the client loses that server; calls keep going to s2.
    await events.next('server_lost', (e) => e.serverRid === 's1');
    await expect(work(client, 'after')).resolves.toBe('S2');
  });

  it('a request racing the drain ends with a finite Rejected or succeeds; none hangs, none runs after the drain began', async () => {
    let ranAfterDrain = 0;
    let draining = false;
    const { s1, client } = await twoServersAndClient((name) => (p) => {
      if (name === 'S1' && draining) ranAfterDrain++;
      return `${name}:${String(p)}`;
    });
    // Fire a burst, and start the drain in the same turn, before the client can learn of it.
    const burst = Array.from({ length: 40 }, (_, i) => outcome(work(client, i, 5000)));
    draining = true;
    const drain = s1.drain();
    const results = await within(Promise.all(burst), 8000, 'the racing burst');
    await within(drain, 8000, 'drain');

    const codes = results.map((r) => (r.ok ? 'ok' : r.code));
    for (const code of codes) expect(['ok', 'Rejected']).toContain(code);
    expect(codes.filter((c) => c === 'Rejected').length).toBeGreaterThan(0); // half the burst picked s1
    for (const r of results) if (r.ok) expect(r.value).toMatch(/^S2:/);
    for (const r of results) expect(r.ms).toBeLessThan(5000);
    expect(ranAfterDrain).toBe(0);
    expect(s1.events.count('delivery:rejected')).toBe(codes.filter((c) => c === 'Rejected').length);
  });

  it('draining a Client+Server process drains its Server role only: its own calls go to the remote server', async () => {
    const b = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['request', 'work', () => 'B'],
    ]);
    const a = await startRuntime(
      cleanup,
      {
        clientServer: {
          billing: { server: { listen }, client: { connect: [b.endpoint('billing') as string] } },
        },
      },
      [['request', 'work', () => 'A']],
    );
    await waitForCandidates(a, 'billing', 2);
    await within(a.drain(), 5000, 'drain');
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await work(a, i));
    expect(replies).toEqual(['B', 'B', 'B', 'B']);
  });

  it('the drain deadline bounds the wait: a handler outliving drainTimeoutMs → phase deadline, the listener closes, its request ends finitely (RouteError)', async () => {
    const gate = cleanup.gate();
    const server = await startRuntime(
      cleanup,
      { drainTimeoutMs: 300, clientServer: { billing: { server: { listen } } } },
      [['request', 'work', () => gate.promise]],
    );
    const events = cleanup.add(new EventCollector(server.events));
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);
    const stuck = outcome(work(client, 'stuck', 10000));
    await waitFor(() => server.snapshot().activeHandlers === 1, 5000, 'the handler running');
    const t0 = Date.now();
    await within(server.drain(), 5000, 'drain');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(events.of('drain').map((e) => e.phase)).toEqual(['started', 'deadline']);
    const result = await within(stuck, 5000, 'the stuck request');
    expect(result).toMatchObject({ ok: false, code: 'RouteError' });
  });
});

describe('drain racing an application shutdown', () => {
  it('runtime.close() during runtime.drain(): both complete, nothing throws', async () => {
    const { s1 } = await twoServersAndClient((name) => () => name);
    const drain = s1.drain();
    const close = s1.close();
    await expect(within(Promise.all([drain, close]), 5000)).resolves.toBeDefined();
  });
});
