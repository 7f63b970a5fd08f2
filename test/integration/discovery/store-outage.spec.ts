/**
 * The store under faults (docs/protocol.md#owner-lease-and-fencing, docs/protocol.md#location-store-outage): a Redis outage spares ready connections and
 * accepted requests and opens nothing new until one full read after recovery; a server whose lease
 * refresh is blocked is fenced by its deadline and admits again after a good refresh.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Dealer } from 'zeromq';
import {
  FENCED_CODE,
  RecordKind,
  decodeFrame,
  encodeHello,
  encodePayload,
  encodeRequest,
} from '../../../lib/core/index.js';
import { Cleanup, EventCollector, type Outcome, outcome, waitFor, within } from '../../helpers/index.js';
import { useRedis } from '../store/fixtures.js';
import { candidates, startRuntime } from '../client-server/harness.js';
import { freshPrefix, startAutoClient, startServer } from './harness.js';

const redis = useRedis();
const cleanup = new Cleanup();
afterEach(async () => {
  await cleanup.closeAll();
  await redis.current.restart(); // a test that failed mid-outage leaves the next one a store
});

/** A bare DEALER: hello, one request, and the wire code of the error reply it gets (or 'ok'). */
async function rawRequest(endpoint: string, channel: string, packet: string): Promise<string> {
  const dealer = new Dealer({ linger: 0 });
  dealer.connect(endpoint);
  try {
    await dealer.send(encodeHello(channel, 'raw-client'));
    await dealer.receive(); // the welcome
    await dealer.send(encodeRequest(7, packet, undefined, encodePayload('raw')));
    for (;;) {
      const [frame] = await within(dealer.receive(), 5000, 'the answer');
      for (const record of decodeFrame(frame as Buffer).records) {
        if (record.kind === RecordKind.ErrorReply) return record.error.code;
        if (record.kind === RecordKind.Reply) return 'ok';
      }
    }
  } finally {
    dealer.close();
  }
}

/** Requests from `workers` loops, one after another each, until `stop()`; every outcome kept. */
function steadyTraffic(call: (i: number) => Promise<unknown>, workers: number) {
  const outcomes: { at: number; result: Outcome<unknown> }[] = [];
  let running = true;
  let i = 0;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const result = await outcome(call(i++));
      outcomes.push({ at: Date.now(), result });
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  return {
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

describe('while the store is down', () => {
  it('Redis killed for 10 s under steady traffic: no request fails, nothing new is connected, and a server started meanwhile is found after recovery', async () => {
    // A lease long enough to outlive the outage (docs/protocol.md#location-store-outage: an outage does not extend it).
    const store = {
      redis: redis.current,
      keyPrefix: freshPrefix(),
      lease: { ttlMs: 30000, refreshMs: 2000, refreshTimeoutMs: 1000, marginMs: 2000 },
      fullReadIntervalMs: 2000,
    };
    const served = { a: 0, b: 0, bAfterRecovery: 0 };
    let recovered = false;
    await startServer(cleanup, store, 'billing', { rid: 'a' }, () => ++served.a && 'a');
    const client = await startAutoClient(cleanup, store, 'billing');
    const events = cleanup.add(new EventCollector(client.events));
    await client.waitForCandidates('billing', 1, 5000);
    const traffic = steadyTraffic(
      (i) => client.routeClient.requestToChannel('billing', 'work', i).async({ timeoutMs: 5000 }),
      4,
    );
    await waitFor(() => traffic.outcomes.length > 50, 5000, 'traffic flowing');

    const killedAt = Date.now();
    await redis.current.stop();
    await events.next('discovery', (e) => e.state === 'outage', 10000);
    expect(client.snapshot().locationStore?.discovery).toEqual([
      { kind: 'server', scope: 'billing', descriptors: 1, outage: true },
    ]);
    // Started during the outage without waiting for the store (startupTimeoutMs 0): its start does
    // not fail, and nobody can find it yet.
    await startServer(cleanup, { ...store, startupTimeoutMs: 0 }, 'billing', { rid: 'b' }, () => {
      served.b++;
      if (recovered) served.bAfterRecovery++;
      return 'b';
    });
    await new Promise((r) => setTimeout(r, Math.max(0, 10000 - (Date.now() - killedAt))));
    const during = client.snapshot().channels[0]?.client?.connections ?? [];
    expect(during.map((c) => c.serverRid)).toEqual(['a']);
    expect(served.b).toBe(0);

    await redis.current.restart();
    recovered = true;
    await events.next('discovery', (e) => e.state === 'recovered', 15000);
    await events.next('server_ready', (e) => e.serverRid === 'b', 15000);
    await waitFor(() => served.bAfterRecovery > 0, 5000, 'b serving after recovery');
    // The restarted store is empty: each server writes its descriptor again at its next refresh.
    await waitFor(
      () => client.snapshot().locationStore?.discovery[0]?.descriptors === 2,
      10000,
      'both descriptors back in the store',
    );
    expect(client.snapshot().locationStore?.discovery[0]?.outage).toBe(false);
    await traffic.stop();

    const failed = traffic.outcomes.filter((o) => !o.result.ok);
    expect(failed).toEqual([]);
    expect(events.of('server_lost')).toEqual([]);
  });
});

describe('a server whose lease refresh is blocked is fenced by its deadline', () => {
  it('CLIENT PAUSE blocks the refresh: from the deadline on it leaves selection and refuses new records (Rejected), accepted work finishes, and it admits again after a good refresh', async () => {
    const lease = { ttlMs: 3000, refreshMs: 500, refreshTimeoutMs: 500, marginMs: 1000 };
    const store = { redis: redis.current, keyPrefix: freshPrefix(), lease };
    const release = cleanup.gate();
    const server = await startServer(cleanup, store, 'billing', { rid: 'f' }, async (p) => {
      if (p === 'slow') await release.promise;
      return 'ok';
    });
    const serverEvents = cleanup.add(new EventCollector(server.events));
    // A manual client: the store's pause must not stand in its way.
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.localEndpoint('billing') as string] } } },
    });
    await client.waitForCandidates('billing', 1, 5000);
    const request = (p: string) =>
      outcome(client.routeClient.requestToChannel('billing', 'work', p).async({ timeoutMs: 10000 }));
    const slow = request('slow');
    await waitFor(() => server.snapshot().activeHandlers === 1, 5000, 'slow request accepted');

    const pausedAt = Date.now();
    await redis.current.pauseClients(5000);
    await serverEvents.next('lease', (e) => e.state === 'fenced', 6000);
    const fencedAfter = Date.now() - pausedAt;
    // The last good refresh started before the pause: fenced by then + ttl - margin (timer slack aside).
    expect(fencedAfter).toBeLessThanOrEqual(lease.ttlMs - lease.marginMs + 1000);
    // Clients are told (draining, larger revision): with no other server, a call is Unavailable.
    await waitFor(() => candidates(client, 'billing') === 0, 2000, 'the fenced server out of selection');
    expect(await request('while fenced')).toMatchObject({ ok: false, code: 'Unavailable' });
    // A record that reaches it anyway (sent before the client heard) is refused, never run.
    expect(await rawRequest(server.localEndpoint('billing') as string, 'billing', 'work')).toBe(FENCED_CODE);
    release.open();
    expect(await slow).toMatchObject({ ok: true, value: 'ok' });

    await serverEvents.next('lease', (e) => e.state === 'held', 10000);
    await client.waitForCandidates('billing', 1, 2000);
    expect(await within(request('after'), 5000)).toMatchObject({ ok: true, value: 'ok' });
  });
});
