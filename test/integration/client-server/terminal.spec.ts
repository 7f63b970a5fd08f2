/**
 * docs/protocol.md#no-resend-after-selection, docs/protocol.md#the-local-server, docs/protocol.md#exactly-one-terminal, docs/protocol.md#lifecycle-generations: every request ends exactly once, and nothing is resent after submit.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Cleanup, EventCollector, freePort, outcome, waitFor, within } from '../../helpers/index.js';
import { LOCAL, listen, startRuntime, waitForCandidates } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('nothing is ever resent to another server after submit', () => {
  it('a server whose handler never answers is stopped with requests in flight: each ends exactly once (RouteError or Timeout) and the other server never sees them', async () => {
    const never = cleanup.gate();
    const seenBy = { s1: new Map<number, number>(), s2: new Map<number, number>() };
    const count = (m: Map<number, number>, id: number) => m.set(id, (m.get(id) ?? 0) + 1);
    const s1 = await startRuntime(cleanup, { clientServer: { billing: { server: { listen, rid: 's1' } } } }, [
      [
        'request',
        'work',
        async (p) => {
          count(seenBy.s1, p as number);
          await never.promise; // never answers while the test runs
          return 's1';
        },
      ],
    ]);
    const s2 = await startRuntime(cleanup, { clientServer: { billing: { server: { listen, rid: 's2' } } } }, [
      [
        'request',
        'work',
        (p) => {
          count(seenBy.s2, p as number);
          return 's2';
        },
      ],
    ]);
    const client = await startRuntime(cleanup, {
      clientServer: {
        billing: {
          client: { connect: [s1.endpoint('billing') as string, s2.endpoint('billing') as string] },
        },
      },
    });
    const events = cleanup.add(new EventCollector(client.events));
    await waitForCandidates(client, 'billing', 2);

    const ids = Array.from({ length: 20 }, (_, i) => i);
    let terminals = 0;
    const calls = ids.map((id) =>
      outcome(
        client.routeClient.requestToChannel('billing', 'work', id).async<string>({ timeoutMs: 4000 }),
      ).then((r) => {
        terminals++;
        return r;
      }),
    );
    await waitFor(() => seenBy.s1.size === 10 && seenBy.s2.size === 10, 5000, 'ten requests at each server');
    await within(s1.close(), 5000, 'closing the stalled server');
    const results = await within(Promise.all(calls), 8000, 'every request');

    await events.next('server_lost', (e) => e.serverRid === 's1');
    await new Promise((r) => setTimeout(r, 200)); // room for any (wrong) resend to show up
    expect(terminals).toBe(ids.length);
    for (const id of ids) {
      const r = results[id];
      const atS1 = seenBy.s1.get(id) ?? 0;
      const atS2 = seenBy.s2.get(id) ?? 0;
      expect(atS1 + atS2).toBe(1); // executed exactly once, on exactly one server
      if (atS1 === 1)
        expect(r).toMatchObject({ ok: false, code: expect.stringMatching(/^(RouteError|Timeout)$/) });
      else expect(r).toMatchObject({ ok: true, value: 's2' });
    }
    expect(client.snapshot().pendingRequests).toBe(0);
  });
});

describe('exactly one terminal: cancel via AbortSignal mid-request → Cancelled; the late reply is counted and not delivered elsewhere', () => {
  it('abort mid-request → Cancelled at once; the reply that arrives later is a late reply and completes nothing else', async () => {
    const gate = cleanup.gate();
    const started: unknown[] = [];
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      [
        'request',
        'work',
        async (p) => {
          started.push(p);
          if (p === 'first') await gate.promise;
          return `reply to ${String(p)}`;
        },
      ],
    ]);
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    const events = cleanup.add(new EventCollector(client.events));
    await waitForCandidates(client, 'billing', 1);

    const abort = new AbortController();
    const first = outcome(
      client.routeClient
        .requestToChannel('billing', 'work', 'first')
        .async({ timeoutMs: 10000, signal: abort.signal }),
    );
    await waitFor(() => started.includes('first'), 5000, 'the first handler running');
    abort.abort(new Error('user gave up'));
    const cancelled = await within(first, 1000, 'the cancelled call');
    expect(cancelled).toMatchObject({ ok: false, code: 'Cancelled' });
    expect(client.snapshot().pendingRequests).toBe(0);

    // A second request is pending when the first one's reply arrives late.
    const second = client.routeClient
      .requestToChannel('billing', 'work', 'second')
      .async<string>({ timeoutMs: 10000 });
    gate.open();
    await expect(second).resolves.toBe('reply to second');
    await events.next(
      'delivery',
      (e) => e.result === 'drop' && !!e.reason?.includes('matches no pending request'),
    );
    expect(client.snapshot().lateReplies).toBe(1);

    // An already-aborted signal ends the call before anything is sent.
    const before = started.length;
    await expect(
      client.routeClient.requestToChannel('billing', 'work', 'never').async({ signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({
      code: 'Cancelled',
    });
    await expect(client.routeClient.requestToChannel('billing', 'work', 'after').async()).resolves.toBe(
      'reply to after',
    );
    expect(started.slice(before)).toEqual(['after']);
  });

  it('abort while waiting for a candidate → Cancelled, well before the wait bound', async () => {
    const port = await freePort();
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [`tcp://${LOCAL}:${port}`] } } },
    });
    const abort = new AbortController();
    const call = outcome(
      client.routeClient
        .requestToChannel('billing', 'work', 1)
        .async({ timeoutMs: 4000, signal: abort.signal }),
    );
    setTimeout(() => abort.abort(), 100);
    const result = await within(call, 3000, 'the cancelled call');
    expect(result).toMatchObject({ ok: false, code: 'Cancelled' });
    expect(result.ms).toBeLessThan(2000);
  });

  it('timeout → Timeout at the deadline; the late reply is then discarded (counted, a drop delivery event, no second terminal)', async () => {
    const gate = cleanup.gate();
    let finished = 0;
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      [
        'request',
        'slow',
        async () => {
          await gate.promise;
          finished++;
          return 'too late';
        },
      ],
    ]);
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    const events = cleanup.add(new EventCollector(client.events));
    await waitForCandidates(client, 'billing', 1);

    let settled = 0;
    const call = outcome(
      client.routeClient.requestToChannel('billing', 'slow', 1).async({ timeoutMs: 200 }),
    ).then((r) => {
      settled++;
      return r;
    });
    const result = await within(call, 3000, 'the timed-out call');
    expect(result).toMatchObject({ ok: false, code: 'Timeout' });
    expect(result.ms).toBeGreaterThanOrEqual(150);
    expect(result.ms).toBeLessThan(2000);

    gate.open();
    await waitFor(() => finished === 1, 5000, 'the handler finishing');
    await events.next(
      'delivery',
      (e) => e.result === 'drop' && !!e.reason?.includes('matches no pending request'),
    );
    expect(client.snapshot().lateReplies).toBe(1);
    expect(settled).toBe(1);
    expect(client.snapshot().pendingRequests).toBe(0);
  });
});
