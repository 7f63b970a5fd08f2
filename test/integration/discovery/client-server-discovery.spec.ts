/**
 * ClientServer automatic discovery over a real redis-server (docs/protocol.md#clientserver-handshake, docs/protocol.md#weights-and-drain-state, docs/protocol.md#drain, docs/protocol.md#lifecycle-generations, docs/protocol.md#discovery):
 * servers found without an endpoint in the client's configuration, weight and drain by revision,
 * restart with a new generation, and how fast a new server is found.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ServerDescriptor } from '../../../lib/core/index.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { Cleanup, EventCollector, outcome, waitFor, within } from '../../helpers/index.js';
import { useRedis } from '../store/fixtures.js';
import { candidates, startRuntime } from '../client-server/harness.js';
import { LOCAL, countReplies, freshPrefix, startAutoClient, startServer } from './harness.js';

const redis = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const named = (name: string) => () => name;

describe('a client with discovery: auto finds servers through the store alone', () => {
  it('two servers started after the client are discovered within 1 s each (notification path) and used 1:3 by weight', async () => {
    // A full read only every minute: within the test, only a change notification can find them.
    const store = { redis: redis.current, keyPrefix: freshPrefix(), fullReadIntervalMs: 60000 };
    const client = await startAutoClient(cleanup, store, 'billing');
    const events = cleanup.add(new EventCollector(client.events));
    expect(candidates(client, 'billing')).toBe(0);

    const latencies: number[] = [];
    for (const [rid, weight] of [
      ['a', 100],
      ['b', 300],
    ] as const) {
      // Timed from the moment the descriptor is in the store (the server's start resolved).
      await startServer(cleanup, store, 'billing', { rid, weight }, named(rid));
      const t0 = Date.now();
      await events.next('server_ready', (e) => e.serverRid === rid, 5000);
      latencies.push(Date.now() - t0);
    }
    for (const ms of latencies) expect(ms).toBeLessThan(1000);

    const counts = await countReplies(client, 'billing', 400);
    expect(counts.get('a')).toBe(100);
    expect(counts.get('b')).toBe(300);
  });

  it('with notifications lost, a new server is found by the periodic full read within one interval', async () => {
    const keyPrefix = freshPrefix();
    // The real store, with its change notifications thrown away: only the full read is left.
    const deaf = new (class extends RedisLocationStore {
      override watch(): Promise<() => Promise<void>> {
        return Promise.resolve(() => Promise.resolve());
      }
    })({ redis: redis.current.url, keyPrefix });
    cleanup.add(deaf);
    const intervalMs = 1000;
    const client = await startRuntime(cleanup, {
      locationStore: { instance: deaf, fullReadIntervalMs: intervalMs },
      clientServer: { billing: { client: { discovery: 'auto' } } },
    });
    const events = cleanup.add(new EventCollector(client.events));
    const latencies: number[] = [];
    for (const rid of ['a', 'b', 'c']) {
      await startServer(cleanup, { redis: redis.current, keyPrefix }, 'billing', { rid }, named(rid));
      const t0 = Date.now();
      await events.next('server_ready', (e) => e.serverRid === rid, 10000);
      latencies.push(Date.now() - t0);
    }
    // One interval, plus the connection's own handshake.
    for (const ms of latencies) expect(ms).toBeLessThan(intervalMs + 1000);
  });

  it('a server is a candidate only after the identity on the connection matches a listed descriptor', async () => {
    const keyPrefix = freshPrefix();
    const store = { redis: redis.current, keyPrefix };
    const client = await startAutoClient(cleanup, store, 'billing');
    // A real server, but the descriptor the store holds names another generation of its RID.
    const server = await startRuntime(cleanup, {
      clientServer: { billing: { server: { listen: { port: 0, bindHost: LOCAL }, rid: 'x' } } },
    });
    const writer = cleanup.add(new RedisLocationStore({ redis: redis.current.url, keyPrefix }));
    const forged: ServerDescriptor = {
      kind: 'server',
      channel: 'billing',
      rid: 'x',
      generation: 'not-this-run',
      endpoint: server.endpoint('billing') as string,
      weight: 100,
      draining: false,
      revision: 1,
    };
    await writer.put(forged, 10000);
    await waitFor(
      () => client.snapshot().channels[0]?.client?.connections.some((c) => c.unconfirmed) === true,
      5000,
      'the connection answered with an unlisted identity',
    );
    expect(candidates(client, 'billing')).toBe(0);
    // The right generation listed: the same connection becomes ready.
    await writer.put({ ...forged, generation: server.generation }, 10000);
    await client.waitForCandidates('billing', 1, 5000);
  });
});

describe('manual and automatic sources of one server merge', () => {
  it('one run reached by hand and through the store is one candidate, whatever the endpoint strings', async () => {
    const store = { redis: redis.current, keyPrefix: freshPrefix() };
    const server = await startServer(cleanup, store, 'billing', { rid: 'm' }, named('m'));
    // The same listener under another name: the descriptor says 127.0.0.1, the configuration localhost.
    const byHand = (server.endpoint('billing') as string).replace('127.0.0.1', 'localhost');
    const client = await startRuntime(cleanup, {
      locationStore: { redis: redis.current.url, keyPrefix: store.keyPrefix },
      clientServer: { billing: { client: { discovery: 'auto', connect: [byHand] } } },
    });
    await waitFor(
      () => (client.snapshot().channels[0]?.client?.connections ?? []).filter((c) => c.ready).length === 2,
      5000,
      'both connections ready',
    );
    const connections = client.snapshot().channels[0]?.client?.connections ?? [];
    expect(connections.map((c) => c.source).sort()).toEqual(['discovered', 'manual']);
    expect(new Set(connections.map((c) => `${c.serverRid}/${c.generation}`)).size).toBe(1);
    expect(candidates(client, 'billing')).toBe(1);
    expect((await countReplies(client, 'billing', 10)).get('m')).toBe(10);
  });
});

describe('weight and drain reach discovering clients by revision', () => {
  it('a weight change and a drain are published with larger revisions; the drained server is released and its connection retired', async () => {
    const store = { redis: redis.current, keyPrefix: freshPrefix() };
    const a = await startServer(cleanup, store, 'billing', { rid: 'a' }, named('a'));
    const b = await startServer(cleanup, store, 'billing', { rid: 'b' }, named('b'));
    const client = await startAutoClient(cleanup, store, 'billing');
    await client.waitForCandidates('billing', 2, 5000);
    const reader = cleanup.add(
      new RedisLocationStore({ redis: redis.current.url, keyPrefix: store.keyPrefix }),
    );
    const stored = async (rid: string) =>
      ((await reader.list('server', 'billing')) as ServerDescriptor[]).find((d) => d.rid === rid);
    expect((await stored('a'))?.revision).toBe(1);

    a.setChannelWeight('billing', 0);
    await waitFor(() => candidates(client, 'billing') === 1, 2000, 'a leaves selection');
    // The store write runs beside the control record: poll until it lands.
    const deadline = Date.now() + 5000;
    while ((await stored('a'))?.revision !== 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(await stored('a')).toMatchObject({ weight: 0, revision: 2 });
    expect((await countReplies(client, 'billing', 20)).get('b')).toBe(20);

    const events = cleanup.add(new EventCollector(client.events));
    await within(b.drain(), 10000, 'drain of b');
    expect(await stored('b')).toBeUndefined();
    // The client drops the connection once the descriptor is gone; with a at weight 0, none is left.
    await waitFor(
      () => !client.snapshot().channels[0]?.client?.connections.some((c) => c.serverRid === 'b'),
      7000,
      'b retired',
    );
    const r = await outcome(client.routeClient.requestToChannel('billing', 'work', 1).async());
    expect(r).toMatchObject({ ok: false, code: 'Unavailable' });
    expect(events.of('server_state').some((e) => e.serverRid === 'b' && e.draining)).toBe(true);
  });
});

describe('a restart with a new generation replaces the old one', () => {
  it('the new generation becomes ready, the old connection goes after it, and a late reply from the old generation completes only its own request', async () => {
    const store = { redis: redis.current, keyPrefix: freshPrefix() };
    const release = cleanup.gate();
    const old = await startServer(cleanup, store, 'billing', { rid: 'same' }, async (p) => {
      if (p === 'slow') await release.promise;
      return 'old';
    });
    const client = await startAutoClient(cleanup, store, 'billing');
    await client.waitForCandidates('billing', 1, 5000);
    const slow = outcome(
      client.routeClient.requestToChannel('billing', 'work', 'slow').async({ timeoutMs: 20000 }),
    );

    const fresh = await startServer(cleanup, store, 'billing', { rid: 'same' }, named('new'));
    expect(fresh.generation).not.toBe(old.generation);
    await waitFor(
      () =>
        client
          .snapshot()
          .channels[0]?.client?.connections.some((c) => c.generation === fresh.generation && c.ready) ===
        true,
      5000,
      'the new generation ready',
    );
    // docs/protocol.md#lifecycle-generations: with both runs alive and not draining, only the new one is selected and the
    // old connection leaves while its request is still running.
    expect((await countReplies(client, 'billing', 10)).get('new')).toBe(10);
    await waitFor(
      () => !client.snapshot().channels[0]?.client?.connections.some((c) => c.generation === old.generation),
      5000,
      'the old connection retired',
    );
    const draining = old.drain();
    release.open();
    await within(draining, 10000, 'drain of the old run');
    expect(await slow).toMatchObject({ ok: true, value: 'old' });
    await waitFor(
      () =>
        client.snapshot().channels[0]?.client?.connections.every((c) => c.generation === fresh.generation) ===
        true,
      7000,
      'only the new generation left',
    );
  });
});
