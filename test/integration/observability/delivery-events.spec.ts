/**
 * Issue 7, docs/protocol.md#what-observability-separates: every handler delivery result is produced by a real failure over real sockets
 * and reaches `runtime.events` and `runtime.metrics()`; selection events name the source and the
 * chosen target and whether the source-local queue took the call.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import * as zmq from 'zeromq';
import {
  type DeliveryResult,
  LATENCY_SAMPLE_WEIGHT,
  RecordKind,
  decodeFrame,
  encodeHello,
  encodePayload,
  encodeRequest,
} from '../../../lib/core/index.js';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, outcome, waitFor, within } from '../../helpers/index.js';
import { listen, startRuntime, waitForCandidates } from '../client-server/harness.js';
import { endpointOf, startNode, who } from '../route-mesh/harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/** msgpack 0xc1 is "never used": a payload no decoder accepts. */
const GARBAGE = Uint8Array.from([0xc1, 0xc1, 0xc1]);

async function rawDealer(endpoint: string): Promise<zmq.Dealer> {
  const dealer = cleanup.add(new zmq.Dealer({ linger: 0 }));
  dealer.connect(endpoint);
  await dealer.send(encodeHello('billing', 'raw-dealer'));
  const [welcome] = await within(dealer.receive(), 5000, 'welcome');
  expect(decodeFrame(welcome as Buffer).records[0]?.kind).toBe(RecordKind.Welcome);
  return dealer;
}

function deliveries(events: EventCollector, result: DeliveryResult) {
  return events.of('delivery').filter((e) => e.result === result);
}

describe('handler delivery results: each kind comes from a real failure', () => {
  it('ok, no_handler, handler_error, reply_error, decode_error, protocol_error, rejected (draining) and drop (a late reply)', async () => {
    const release = cleanup.gate();
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['request', 'echo', (p) => p],
      [
        'request',
        'boom',
        () => {
          throw new Error('boom');
        },
      ],
      // A symbol cannot be encoded: the handler ran, its reply could not be built.
      ['request', 'unencodable', () => Symbol('no wire form')],
      [
        'request',
        'slow',
        async (p) => {
          await release.promise;
          return p;
        },
      ],
    ]);
    const serverEvents = cleanup.add(new EventCollector(server.events));
    const endpoint = server.endpoint('billing') as string;
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [endpoint] } } },
    });
    const clientEvents = cleanup.add(new EventCollector(client.events));
    await waitForCandidates(client, 'billing', 1);
    const call = (packet: string, timeoutMs = 5000) =>
      outcome(client.routeClient.requestToChannel('billing', packet, packet).async({ timeoutMs }));

    expect(await call('echo')).toMatchObject({ ok: true, value: 'echo' });
    expect(await call('missing')).toMatchObject({ ok: false, code: 'RemoteError' });
    expect(await call('boom')).toMatchObject({ ok: false, code: 'RemoteError' });
    expect(await call('unencodable')).toMatchObject({ ok: false, code: 'RemoteError' });
    // drop: the caller gives up first; the reply that comes later finds nobody.
    expect(await call('slow', 100)).toMatchObject({ ok: false, code: 'Timeout' });

    const raw = await rawDealer(endpoint);
    await raw.send(encodeRequest(7, 'echo', undefined, GARBAGE));
    await raw.send(Buffer.from([0xc1]));
    await waitFor(() => deliveries(serverEvents, 'decode_error').length === 1, 5000, 'decode_error');
    await waitFor(() => serverEvents.of('protocol_error').length === 1, 5000, 'protocol_error');

    // rejected: the server drains while 'slow' still runs; a request that arrives now is refused.
    const draining = server.drain();
    await waitFor(() => serverEvents.of('drain').length > 0, 5000, 'drain started');
    await raw.send(encodeRequest(8, 'echo', undefined, encodePayload('late')));
    await waitFor(() => deliveries(serverEvents, 'rejected').length === 1, 5000, 'rejected');
    release.open();
    await draining;
    await waitFor(() => deliveries(clientEvents, 'drop').length === 1, 5000, 'the late reply dropped');

    expect(deliveries(serverEvents, 'ok').map((e) => e.packet)).toEqual(['echo', 'slow']);
    expect(deliveries(serverEvents, 'no_handler')[0]).toMatchObject({ packet: 'missing', kind: 'request' });
    expect(deliveries(serverEvents, 'handler_error')[0]).toMatchObject({ packet: 'boom' });
    expect(deliveries(serverEvents, 'reply_error')[0]).toMatchObject({ packet: 'unencodable' });
    expect(deliveries(clientEvents, 'drop')[0]).toMatchObject({ route: 'client-server', channel: 'billing' });

    // The same counts in metrics, per channel, on both sides.
    const served = server.metrics().scopes.find((s) => s.channel === 'billing');
    expect(served?.deliveries).toMatchObject({
      ok: 2,
      no_handler: 1,
      handler_error: 1,
      reply_error: 1,
      decode_error: 1,
      rejected: 1,
    });
    // Handler time is sampled: each timed run counts LATENCY_SAMPLE_WEIGHT times.
    expect((served?.handlerDuration.count ?? -1) % LATENCY_SAMPLE_WEIGHT).toBe(0);
    const called = client.metrics().scopes.find((s) => s.channel === 'billing');
    expect(called).toMatchObject({ requests: 5, outcomes: { reply: 1, RemoteError: 3, Timeout: 1 } });
    expect(called?.deliveries).toMatchObject({ drop: 1 });
    // Every failure is timed (4); the one reply only if sampled.
    expect([4, 4 + LATENCY_SAMPLE_WEIGHT]).toContain(called?.requestLatency.count);
    expect(client.prometheus()).toContain(
      'zlink_requests_ended_total{route="client-server",channel="billing",outcome="Timeout"} 1',
    );
  });
});

describe('selection: source, target and admission are observed per call', () => {
  it('ClientServer: the chosen Server RID, the client id and immediate admission', async () => {
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['request', 'echo', (p) => p],
      ['send', 'note', () => undefined],
    ]);
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);
    const events = cleanup.add(new EventCollector(client.events));
    await client.routeClient.requestToChannel('billing', 'echo', 1).async();
    await client.routeClient.sendToChannel('billing', 'note', 1).async();
    const serverRid = client.snapshot().channels[0]?.client?.connections[0]?.serverRid;
    expect(serverRid).toBeDefined();
    expect(events.of('selection')).toEqual([
      expect.objectContaining({
        route: 'client-server',
        kind: 'request',
        channel: 'billing',
        targetRid: serverRid,
        admission: 'immediate',
      }),
      expect.objectContaining({
        route: 'client-server',
        kind: 'send',
        channel: 'billing',
        targetRid: serverRid,
        admission: 'immediate',
      }),
    ]);
    expect(events.of('selection')[0]?.sourceRid).toEqual(expect.any(String));
    expect(client.metrics().scopes.find((s) => s.channel === 'billing')).toMatchObject({
      sends: 1,
      requests: 1,
    });
  });

  it('RouteMesh select-one and Node direct: mesh, source NodeRid and target NodeRid', async () => {
    const b = await startNode(cleanup, {
      rid: 'node-b',
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'who', who('node-b')]],
      nodeHandlers: [['request', 'ping', () => 'pong']],
    });
    const a: ZLinkRuntime = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b)],
      channels: { match: { role: 'client' } },
    });
    await a.waitForCandidates('match', 1);
    const events = cleanup.add(new EventCollector(a.events));
    await expect(a.routeClient.requestToChannel('match', 'who', null).async()).resolves.toBe('node-b');
    await expect(a.routeClient.requestToNode('game', 'node-b', 'ping', null).async()).resolves.toBe('pong');
    expect(events.of('selection')).toEqual([
      expect.objectContaining({
        route: 'route-mesh',
        mesh: 'game',
        channel: 'match',
        sourceRid: 'node-a',
        targetRid: 'node-b',
      }),
      expect.objectContaining({
        route: 'route-mesh',
        mesh: 'game',
        sourceRid: 'node-a',
        targetRid: 'node-b',
        kind: 'request',
      }),
    ]);
    expect(events.of('selection')[1]).not.toHaveProperty('channel');
    const metrics = a.metrics().scopes;
    expect(metrics.find((s) => s.channel === 'match')).toMatchObject({
      mesh: 'game',
      requests: 1,
      outcomes: { reply: 1 },
    });
    expect(metrics.find((s) => s.route === 'route-mesh' && s.channel === undefined)).toMatchObject({
      requests: 1,
    });
  });

  it('nobody listening for per-message events: the message path builds none, metrics still count', async () => {
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['request', 'echo', (p) => p],
    ]);
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await waitForCandidates(client, 'billing', 1);
    const seen: string[] = [];
    const off = client.events.subscribe((e) => seen.push(e.type), { perMessage: false });
    const offServer = server.events.subscribe((e) => seen.push(e.type), { perMessage: false });
    for (let i = 0; i < 20; i++) await client.routeClient.requestToChannel('billing', 'echo', i).async();
    off();
    offServer();
    expect(seen.filter((t) => t === 'selection' || t === 'delivery')).toEqual([]);
    expect(server.metrics().scopes.find((s) => s.channel === 'billing')?.deliveries.ok).toBe(20);
    expect(client.metrics().scopes.find((s) => s.channel === 'billing')?.outcomes.reply).toBe(20);
  });
});

describe('metrics: calls that end before they are queued are counted per code', () => {
  it('ClientServer with no ready server (NotFound) and RouteMesh with no member (NotFound, Unavailable)', async () => {
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: ['tcp://127.0.0.1:1'] } } },
    });
    const failed = await outcome(
      client.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 100 }),
    );
    expect(failed).toMatchObject({ ok: false, code: 'NotFound' });
    await outcome(client.routeClient.sendToChannel('billing', 'note', 1).async({ timeoutMs: 100 }));
    const billing = client.metrics().scopes.find((s) => s.channel === 'billing');
    expect(billing).toMatchObject({ sends: 0, requests: 0, refused: { NotFound: 2 } });
    expect(client.prometheus()).toContain(
      'zlink_calls_refused_total{route="client-server",channel="billing",code="NotFound"} 2',
    );

    const b = await startNode(cleanup, {
      rid: 'node-b',
      channels: { match: { role: 'server', weight: 0 } },
      handlers: [['match', 'request', 'who', who('node-b')]],
    });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b)],
      channels: { match: { role: 'client' }, other: { role: 'client' } },
    });
    await a.waitForPeers('game', 1);
    expect(await outcome(a.routeClient.requestToChannel('match', 'who', null).async())).toMatchObject({
      code: 'Unavailable',
    });
    expect(await outcome(a.routeClient.sendToChannel('other', 'x', null).async())).toMatchObject({
      code: 'NotFound',
    });
    const scopes = a.metrics().scopes;
    expect(scopes.find((s) => s.channel === 'match')?.refused).toEqual({ Unavailable: 1 });
    expect(scopes.find((s) => s.channel === 'other')?.refused).toEqual({ NotFound: 1 });
  });
});
