/**
 * docs/protocol.md#clientserver-handshake: listeners, endpoints and the handshake that makes a server a ready candidate.
 * Real zeromq sockets on 127.0.0.1, port 0.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import * as zmq from 'zeromq';
import { RecordKind, decodeFrame, encodeHello, encodeReply, encodePayload } from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, outcome, waitFor, within } from '../../helpers/index.js';
import {
  FakeServer,
  LOCAL,
  candidates,
  fakeState,
  listen,
  readyConnections,
  startRuntime,
  waitForCandidates,
} from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const echo = ['request', 'echo', (p: unknown) => p] as const;

describe('one ROUTER listener per Server channel; port 0 binds a free port and the bound endpoint is advertised', () => {
  it('port 0 binds a free port per Server channel; runtime.endpoint(channel) is the bound endpoint with advertiseHost honoured', async () => {
    const runtime = cleanup.add(
      new ZLinkRuntime({
        clientServer: {
          billing: { server: { listen: { port: 0, bindHost: LOCAL, advertiseHost: 'billing-1.example' } } },
          ledger: { server: { listen: { port: 0, bindHost: LOCAL } } },
        },
      }),
    );
    const events = cleanup.add(new EventCollector(runtime.events));
    runtime.registerChannelHandler({
      channel: 'billing',
      kind: 'request',
      packet: 'echo',
      handler: (p) => p,
      source: 't',
    });
    await runtime.start();

    const billing = runtime.endpoint('billing') as string;
    const ledger = runtime.endpoint('ledger') as string;
    const billingPort = Number(/^tcp:\/\/billing-1\.example:(\d+)$/.exec(billing)?.[1]);
    const ledgerPort = Number(/^tcp:\/\/127\.0\.0\.1:(\d+)$/.exec(ledger)?.[1]);
    expect(billingPort).toBeGreaterThan(0);
    expect(ledgerPort).toBeGreaterThan(0);
    expect(billingPort).not.toBe(ledgerPort); // one listener per channel
    expect(runtime.localEndpoint('billing')).toBe(`tcp://127.0.0.1:${billingPort}`);
    expect(
      events
        .of('listening')
        .map((e) => [e.channel, e.endpoint])
        .sort(),
    ).toEqual(
      [
        ['billing', billing],
        ['ledger', ledger],
      ].sort(),
    );
    expect(runtime.snapshot().channels.find((c) => c.channel === 'billing')?.server?.endpoint).toBe(billing);

    // The advertised port is really bound: a client reaching it (by the bind host) gets answers.
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [`tcp://${LOCAL}:${billingPort}`] } } },
    });
    await expect(
      client.routeClient.requestToChannel('billing', 'echo', 'hi').async({ timeoutMs: 5000 }),
    ).resolves.toBe('hi');
  });

  it('one DEALER per (client, server endpoint): a repeated endpoint is one connection', async () => {
    const s1 = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [echo]);
    const s2 = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [echo]);
    const e1 = s1.endpoint('billing') as string;
    const e2 = s2.endpoint('billing') as string;
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [e1, e2, e1] } } },
    });
    await waitForCandidates(client, 'billing', 2);
    const connections = client.snapshot().channels[0]?.client?.connections ?? [];
    expect(connections.map((c) => c.endpoint).sort()).toEqual([e1, e2].sort());
    expect(connections.every((c) => c.ready)).toBe(true);
  });
});

describe('a handshake on the real connection confirms ChannelName, Server RID, lifecycle generation, weight and drain state before a server becomes a ready candidate', () => {
  it('server_ready carries what the server confirmed; the lifecycle generation is random per process start', async () => {
    const s1 = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen, rid: 'rid-1', weight: 250 } } } },
      [echo],
    );
    const s2 = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen, rid: 'rid-2' } } } },
      [echo],
    );
    expect(s1.generation).not.toBe(s2.generation);

    const client = cleanup.add(
      new ZLinkRuntime({
        clientServer: {
          billing: {
            client: { connect: [s1.endpoint('billing') as string, s2.endpoint('billing') as string] },
          },
        },
      }),
    );
    const events = cleanup.add(new EventCollector(client.events));
    expect(candidates(client, 'billing')).toBe(0);
    await client.start();
    const ready1 = await events.next('server_ready', (e) => e.serverRid === 'rid-1');
    const ready2 = await events.next('server_ready', (e) => e.serverRid === 'rid-2');
    expect(ready1).toMatchObject({
      channel: 'billing',
      generation: s1.generation,
      weight: 250,
      draining: false,
      endpoint: s1.endpoint('billing'),
    });
    expect(ready2).toMatchObject({
      channel: 'billing',
      generation: s2.generation,
      weight: 100,
      draining: false,
      endpoint: s2.endpoint('billing'),
    });
    await waitForCandidates(client, 'billing', 2);
    const byRid = Object.fromEntries(
      (client.snapshot().channels[0]?.client?.connections ?? []).map((c) => [c.serverRid, c]),
    );
    expect(byRid['rid-1']).toMatchObject({
      ready: true,
      generation: s1.generation,
      weight: 250,
      draining: false,
    });
    expect(byRid['rid-2']).toMatchObject({
      ready: true,
      generation: s2.generation,
      weight: 100,
      draining: false,
    });
  });

  it('a client pointed at a listener of a DIFFERENT channel never becomes ready and records a protocol_error event', async () => {
    const ledgerServer = await startRuntime(cleanup, { clientServer: { ledger: { server: { listen } } } }, [
      echo,
    ]);
    const serverEvents = cleanup.add(new EventCollector(ledgerServer.events));
    const client = cleanup.add(
      new ZLinkRuntime({
        clientServer: { billing: { client: { connect: [ledgerServer.endpoint('ledger') as string] } } },
      }),
    );
    const events = cleanup.add(new EventCollector(client.events));
    await client.start();

    const error = await events.next('protocol_error', () => true, 5000);
    expect(error).toMatchObject({
      channel: 'billing',
      route: 'client-server',
      endpoint: ledgerServer.endpoint('ledger'),
    });
    expect(error.reason).toContain('ledger');
    await serverEvents.next('protocol_error', (e) => e.reason.includes('billing'));
    expect(events.of('server_ready')).toHaveLength(0);
    expect(readyConnections(client, 'billing')).toBe(0);
    const call = await outcome(
      client.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 300 }),
    );
    expect(call).toMatchObject({ ok: false, code: 'NotFound' });
    expect(events.of('server_ready')).toHaveLength(0);
  });

  it('a raw zeromq Router that never answers hello never becomes a candidate, so calls end NotFound after the bounded wait', async () => {
    const fake = cleanup.add(await new FakeServer(undefined).bind());
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [fake.endpoint] } } },
    });
    await waitFor(() => fake.clients.length > 0, 5000, 'hello at the fake server');

    const call = await outcome(
      client.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 300 }),
    );
    expect(call).toMatchObject({ ok: false, code: 'NotFound' });
    expect(call.ms).toBeGreaterThanOrEqual(250);
    expect(call.ms).toBeLessThan(2000);
    const send = await outcome(
      client.routeClient.sendToChannel('billing', 'note', 1).async({ timeoutMs: 300 }),
    );
    expect(send).toMatchObject({ ok: false, code: 'NotFound' });
    expect(readyConnections(client, 'billing')).toBe(0);
    // Nothing but hellos ever reached the unconfirmed server.
    expect(fake.received.every((r) => r.record.kind === RecordKind.Hello)).toBe(true);
  });

  it('drain state and weight come from the handshake: a draining welcome is ready but no candidate until a larger revision clears it; a stale revision is ignored', async () => {
    const fake = cleanup.add(
      await new FakeServer(fakeState('billing', { draining: true, revision: 5 })).bind(),
    );
    const client = cleanup.add(
      new ZLinkRuntime({ clientServer: { billing: { client: { connect: [fake.endpoint] } } } }),
    );
    const events = cleanup.add(new EventCollector(client.events));
    await client.start();
    const ready = await events.next('server_ready');
    expect(ready).toMatchObject({ serverRid: 'fake-server', generation: 'fake-generation', draining: true });
    expect(candidates(client, 'billing')).toBe(0);
    expect(
      await outcome(client.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 300 })),
    ).toMatchObject({
      ok: false,
      code: 'Unavailable',
    });

    const id = fake.clients[0] as Buffer;
    await fake.state(id, fakeState('billing', { draining: false, revision: 6 }));
    await events.next('server_state', (e) => !e.draining);
    await waitForCandidates(client, 'billing', 1);
    // A late, smaller revision of the same generation does not make it draining again (docs/protocol.md#weights-and-drain-state).
    await fake.state(id, fakeState('billing', { draining: true, revision: 4 }));
    // A later state of another generation on this connection is not applied either.
    await fake.state(id, fakeState('billing', { draining: true, revision: 99, generation: 'other' }));

    const reply = client.routeClient
      .requestToChannel('billing', 'echo', 'ping')
      .async<string>({ timeoutMs: 5000 });
    await waitFor(
      () => fake.received.some((r) => r.record.kind === RecordKind.Request),
      5000,
      'request at the fake server',
    );
    const request = fake.received.find((r) => r.record.kind === RecordKind.Request);
    if (request?.record.kind !== RecordKind.Request) throw new Error('unreachable');
    await fake.send(request.id, encodeReply(request.record.correlation, encodePayload('pong')));
    await expect(reply).resolves.toBe('pong');
    expect(events.of('server_state')).toHaveLength(1);
    expect(candidates(client, 'billing')).toBe(1);
  });

  it('a raw zeromq Dealer saying hello for the listener’s channel gets a Welcome with ChannelName, Server RID, generation, weight and drain state', async () => {
    const server = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen, rid: 'rid-w', weight: 42 } } } },
      [echo],
    );
    const dealer = cleanup.add(new zmq.Dealer({ linger: 0 }));
    dealer.connect(server.endpoint('billing') as string);
    await dealer.send(encodeHello('billing', 'raw-client'));
    const [frame] = await within(dealer.receive(), 5000, 'welcome');
    const { records } = decodeFrame(frame as Buffer);
    expect(records).toEqual([
      {
        kind: RecordKind.Welcome,
        channel: 'billing',
        serverRid: 'rid-w',
        generation: server.generation,
        weight: 42,
        draining: false,
        revision: 1,
      },
    ]);
  });
});

describe('reconnects back off: an endpoint that accepts TCP but fails every handshake is not flooded', () => {
  it('a server that drops every connection sees a handful of attempts in 2 s, not thousands', async () => {
    const { createServer } = await import('node:net');
    let accepted = 0;
    const sockets = new Set<import('node:net').Socket>();
    // Speaks a broken greeting so the zeromq handshake fails, then hangs up.
    const server = createServer((socket) => {
      accepted++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      socket.end(Buffer.from('not zmtp at all, sorry\n'));
    });
    await new Promise<void>((resolve) => server.listen(0, LOCAL, resolve));
    cleanup.add({
      close: () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
        }),
    });
    const port = (server.address() as import('node:net').AddressInfo).port;
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [`tcp://${LOCAL}:${port}`] } } },
    });
    await new Promise((r) => setTimeout(r, 2000));
    expect(accepted).toBeGreaterThan(0);
    expect(accepted).toBeLessThan(60);
    expect(readyConnections(client, 'billing')).toBe(0);
  });
});
