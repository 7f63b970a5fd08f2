/**
 * docs/protocol.md#exactly-one-terminal, docs/protocol.md#select-one, docs/errors.md#which-call-can-end-with-what: send/request with reply correlation, error replies and their one-way
 * counterparts, server messages that match nothing, and the call outcomes without a candidate.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import * as zmq from 'zeromq';
import {
  type ErrorReplyRecord,
  RecordKind,
  ZLinkError,
  decodeFrame,
  encodeErrorReply,
  encodeHello,
  encodePayload,
  encodeReply,
  encodeRequest,
  encodeSend,
} from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, freePort, outcome, waitFor, within } from '../../helpers/index.js';
import {
  FakeServer,
  LOCAL,
  fakeState,
  listen,
  readyConnections,
  startRuntime,
  waitForCandidates,
} from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/** msgpack 0xc1 is "never used": a payload no decoder accepts. */
const GARBAGE = Uint8Array.from([0xc1, 0xc1, 0xc1]);

async function clientOf(server: ZLinkRuntime, channel = 'billing'): Promise<ZLinkRuntime> {
  const client = await startRuntime(cleanup, {
    clientServer: { [channel]: { client: { connect: [server.endpoint(channel) as string] } } },
  });
  await waitForCandidates(client, channel, 1);
  return client;
}

/** A raw DEALER that completed the hello/welcome handshake with `endpoint`. */
async function rawDealer(endpoint: string, channel = 'billing'): Promise<zmq.Dealer> {
  const dealer = cleanup.add(new zmq.Dealer({ linger: 0 }));
  dealer.connect(endpoint);
  await dealer.send(encodeHello(channel, 'raw-dealer'));
  const [welcome] = await within(dealer.receive(), 5000, 'welcome');
  expect(decodeFrame(welcome as Buffer).records[0]?.kind).toBe(RecordKind.Welcome);
  return dealer;
}

async function receiveRecord(dealer: zmq.Dealer) {
  const [frame] = await within(dealer.receive(), 5000, 'record from the server');
  const { records } = decodeFrame(frame as Buffer);
  expect(records).toHaveLength(1);
  return records[0];
}

describe('send and request with reply correlation', () => {
  it('every reply completes the request it answers, whatever order replies come back in', async () => {
    const notes: unknown[] = [];
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      [
        'request',
        'double',
        async (p) => {
          await new Promise((r) => setTimeout(r, (p as number) % 7)); // replies leave out of order
          return (p as number) * 2;
        },
      ],
      ['send', 'note', (p) => void notes.push(p)],
    ]);
    const client = await clientOf(server);
    const inputs = Array.from({ length: 500 }, (_, i) => i);
    const replies = await Promise.all(
      inputs.map((i) =>
        client.routeClient.requestToChannel('billing', 'double', i).async<number>({ timeoutMs: 10000 }),
      ),
    );
    expect(replies).toEqual(inputs.map((i) => i * 2));

    for (let i = 0; i < 100; i++) await client.routeClient.sendToChannel('billing', 'note', i).async();
    await waitFor(() => notes.length === 100, 5000, '100 notes');
    expect(notes).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(client.snapshot().pendingRequests).toBe(0);
    expect(client.snapshot().lateReplies).toBe(0);
  });
});

describe('a request that finds no handler, cannot be decoded, or whose handler throws gets an error reply; the caller sees RemoteError with the remote code', () => {
  it('no handler → RemoteError with remote code NoHandler', async () => {
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['request', 'echo', (p) => p],
    ]);
    const events = cleanup.add(new EventCollector(server.events));
    const client = await clientOf(server);
    const call = await outcome(
      client.routeClient.requestToChannel('billing', 'missing', 1).async({ timeoutMs: 5000 }),
    );
    expect(call).toMatchObject({ ok: false, code: 'RemoteError' });
    expect((call as { error: ZLinkError }).error.remote?.code).toBe('NoHandler');
    // A send handler of that name does not answer a request either.
    await events.next(
      'delivery',
      (e) => e.result === 'no_handler' && e.kind === 'request' && e.packet === 'missing',
    );
  });

  it('a request whose payload cannot be decoded → error reply DecodeError with the same correlation', async () => {
    const ran: unknown[] = [];
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['request', 'echo', (p) => ran.push(p)],
    ]);
    const events = cleanup.add(new EventCollector(server.events));
    const dealer = await rawDealer(server.endpoint('billing') as string);

    await dealer.send(encodeRequest(4242, 'echo', undefined, GARBAGE));
    const reply = (await receiveRecord(dealer)) as ErrorReplyRecord;
    expect(reply).toMatchObject({
      kind: RecordKind.ErrorReply,
      correlation: 4242,
      error: { code: 'DecodeError' },
    });

    // A request record whose correlation is legible but whose fields are not gets the same answer.
    const broken = Buffer.from(encodePayload([1, RecordKind.Request, 4343, 12345, null, GARBAGE]));
    await dealer.send(broken);
    expect(await receiveRecord(dealer)).toMatchObject({
      kind: RecordKind.ErrorReply,
      correlation: 4343,
      error: { code: 'DecodeError' },
    });

    expect(ran).toHaveLength(0);
    expect(server.events.count('delivery:decode_error')).toBe(2);
    await events.next('delivery', (e) => e.result === 'decode_error' && e.kind === 'request');
  });

  it('a handler that throws → RemoteError with remote code HandlerError; a ZLinkError thrown by the handler keeps its code in .remote.code', async () => {
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      [
        'request',
        'boom',
        () => {
          throw new Error('boom');
        },
      ],
      [
        'request',
        'refuse',
        async () => {
          await Promise.resolve();
          throw new ZLinkError('InvalidArgument', 'amount must be positive', {
            details: { field: 'amount' },
          });
        },
      ],
    ]);
    const client = await clientOf(server);
    const boom = await outcome(
      client.routeClient.requestToChannel('billing', 'boom', 1).async({ timeoutMs: 5000 }),
    );
    expect(boom).toMatchObject({ ok: false, code: 'RemoteError' });
    expect((boom as { error: ZLinkError }).error.remote).toMatchObject({
      code: 'HandlerError',
      message: 'boom',
    });

    const refuse = await outcome(
      client.routeClient.requestToChannel('billing', 'refuse', 1).async({ timeoutMs: 5000 }),
    );
    expect(refuse).toMatchObject({ ok: false, code: 'RemoteError' });
    const error = (refuse as { error: ZLinkError }).error;
    expect(error.remote).toMatchObject({
      code: 'InvalidArgument',
      message: 'amount must be positive',
      details: { field: 'amount' },
    });
    expect(error.remoteCode).toBe('InvalidArgument');
    expect(server.events.count('delivery:handler_error')).toBe(2);
  });

  it('an error whose details cannot be encoded, or whose getError() throws, still ends the request once with HandlerError', async () => {
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      [
        'request',
        'circular',
        () => {
          throw new ZLinkError('InvalidArgument', 'bad input', { details: circular });
        },
      ],
      [
        'request',
        'broken-getError',
        () => {
          throw Object.assign(new Error('outer'), {
            getError: () => {
              throw new Error('getError exploded');
            },
          });
        },
      ],
      [
        'request',
        'hostile',
        () => {
          throw {
            toString() {
              throw new Error('no string for you');
            },
          };
        },
      ],
    ]);
    const client = await clientOf(server);
    const circ = await outcome(
      client.routeClient.requestToChannel('billing', 'circular', 1).async({ timeoutMs: 5000 }),
    );
    expect(circ).toMatchObject({ ok: false, code: 'RemoteError' });
    expect((circ as { error: ZLinkError }).error.remote?.code).toBe('InvalidArgument');
    expect((circ as { error: ZLinkError }).error.remote?.message).toContain('details could not be encoded');
    for (const packet of ['broken-getError', 'hostile']) {
      const o = await outcome(
        client.routeClient.requestToChannel('billing', packet, 1).async({ timeoutMs: 5000 }),
      );
      expect(o).toMatchObject({ ok: false, code: 'RemoteError' });
      expect((o as { error: ZLinkError }).error.remote?.code).toBe('HandlerError');
    }
    // The server process is still serving.
    expect(
      await outcome(client.routeClient.requestToChannel('billing', 'circular', 2).async({ timeoutMs: 5000 })),
    ).toMatchObject({ ok: false });
  });

  it('a handler that throws ZLinkError Rejected itself reaches the caller as RemoteError (remote code Rejected), not as a drain refusal', async () => {
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      [
        'request',
        'no',
        () => {
          throw new ZLinkError('Rejected', 'downstream refused');
        },
      ],
    ]);
    const client = await clientOf(server);
    const o = await outcome(
      client.routeClient.requestToChannel('billing', 'no', 1).async({ timeoutMs: 5000 }),
    );
    expect(o).toMatchObject({ ok: false, code: 'RemoteError' });
    expect((o as { error: ZLinkError }).error.remoteCode).toBe('Rejected');
  });
});

describe('the same failures on a one-way send are dropped and reported as events', () => {
  it('no_handler, decode_error and handler_error on a send reach no handler, build no reply, and are counted', async () => {
    const ran: unknown[] = [];
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['send', 'note', (p) => void ran.push(p)],
      [
        'send',
        'boom',
        () => {
          throw new Error('boom');
        },
      ],
      ['request', 'echo', (p) => p],
    ]);
    const events = cleanup.add(new EventCollector(server.events));
    const client = await clientOf(server);
    const clientEvents = cleanup.add(new EventCollector(client.events));

    // no handler: the send itself completes (the source-local queue accepted it).
    await expect(client.routeClient.sendToChannel('billing', 'missing', 1).async()).resolves.toBeUndefined();
    // a request handler of that name does not take a send.
    await client.routeClient.sendToChannel('billing', 'echo', 1).async();
    await waitFor(() => server.events.count('delivery:no_handler') === 2, 5000, 'two no_handler events');
    expect(
      events
        .of('delivery')
        .filter((e) => e.result === 'no_handler')
        .map((e) => [e.kind, e.packet]),
    ).toEqual([
      ['send', 'missing'],
      ['send', 'echo'],
    ]);

    // handler error
    await client.routeClient.sendToChannel('billing', 'boom', 1).async();
    const failed = await events.next('delivery', (e) => e.result === 'handler_error');
    expect(failed).toMatchObject({ kind: 'send', packet: 'boom', reason: 'boom' });

    // decode error: only a raw dealer can put an undecodable payload on the wire.
    const dealer = await rawDealer(server.endpoint('billing') as string);
    await dealer.send(encodeSend('note', undefined, GARBAGE));
    await events.next('delivery', (e) => e.result === 'decode_error' && e.kind === 'send');
    expect(server.events.count('delivery:decode_error')).toBe(1);

    // Prove nothing came back: a request after them is answered first on both connections.
    await expect(
      client.routeClient.requestToChannel('billing', 'echo', 'after').async({ timeoutMs: 5000 }),
    ).resolves.toBe('after');
    await dealer.send(encodeRequest(77, 'echo', undefined, encodePayload('raw')));
    expect(await receiveRecord(dealer)).toMatchObject({ kind: RecordKind.Reply, correlation: 77 });
    expect(ran).toHaveLength(0);
    expect(clientEvents.of('protocol_error')).toHaveLength(0);
    expect(client.snapshot().lateReplies).toBe(0);
  });
});

describe('a server message matching no pending request is dropped (a reply) or a protocol_error (a call) and reaches no handler', () => {
  it('a Reply or ErrorReply with an unknown correlation from a (fake) server is a drop delivery and completes nothing', async () => {
    const fake = cleanup.add(await new FakeServer(fakeState('billing')).bind());
    const ran: unknown[] = [];
    // The client process also serves 'billing' with a handler, to show nothing reaches a handler.
    const client = cleanup.add(
      new ZLinkRuntime({
        clientServer: { billing: { client: { connect: [fake.endpoint] }, server: { listen, weight: 0 } } },
      }),
    );
    client.registerChannelHandler({
      channel: 'billing',
      kind: 'request',
      packet: 'echo',
      handler: (p) => ran.push(p),
      source: 't',
    });
    client.registerChannelHandler({
      channel: 'billing',
      kind: 'send',
      packet: 'echo',
      handler: (p) => ran.push(p),
      source: 't',
    });
    const events = cleanup.add(new EventCollector(client.events));
    await client.start();
    await waitForCandidates(client, 'billing', 1);
    const id = fake.clients[0] as Buffer;

    // A real pending request, to show a forged reply does not complete it either.
    const pending = client.routeClient
      .requestToChannel('billing', 'echo', 'mine')
      .async<string>({ timeoutMs: 5000 });
    await waitFor(
      () => fake.received.some((r) => r.record.kind === RecordKind.Request),
      5000,
      'request at the fake',
    );
    const request = fake.received.find((r) => r.record.kind === RecordKind.Request)?.record;
    if (request?.kind !== RecordKind.Request) throw new Error('unreachable');

    await fake.send(id, encodeReply(999_999_001, encodePayload('forged')));
    await fake.send(id, encodeErrorReply(999_999_002, { code: 'HandlerError', message: 'forged' }));
    // A server never starts a business call toward a client (docs/protocol.md#clientserver-roles): a Request/Send record from it reaches no handler.
    await fake.send(id, encodeRequest(999_999_003, 'echo', undefined, encodePayload('pushed')));
    await fake.send(id, encodeSend('echo', undefined, encodePayload('pushed')));
    await waitFor(() => events.of('protocol_error').length >= 2, 5000, 'two protocol errors');
    const drops = () => events.of('delivery').filter((e) => e.result === 'drop');
    await waitFor(() => drops().length >= 2, 5000, 'two dropped replies');
    expect(drops().every((e) => e.reason?.includes('matches no pending request'))).toBe(true);
    const reasons = events.of('protocol_error').map((e) => e.reason);
    expect(reasons.filter((r) => r.includes('does not accept record kind'))).toHaveLength(2);
    expect(client.snapshot().lateReplies).toBe(2);
    expect(client.snapshot().pendingRequests).toBe(1);

    await fake.send(id, encodeReply(request.correlation, encodePayload('yours')));
    await expect(pending).resolves.toBe('yours');
    expect(ran).toHaveLength(0);
  });
});

describe('with no ready candidate a call waits at most min(request timeout, 5 s), then ends NotFound', () => {
  it('a client connecting to a free port where nothing listens: timeoutMs 300 → NotFound after ≈300 ms, not 5 s', async () => {
    const port = await freePort();
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [`tcp://${LOCAL}:${port}`] } } },
    });
    const [request, send] = await Promise.all([
      outcome(client.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 300 })),
      outcome(client.routeClient.sendToChannel('billing', 'note', 1).async({ timeoutMs: 300 })),
    ]);
    for (const call of [request, send]) {
      expect(call).toMatchObject({ ok: false, code: 'NotFound' });
      expect(call.ms).toBeGreaterThanOrEqual(250);
      expect(call.ms).toBeLessThan(2000);
    }
  });

  it('with a long request timeout the wait is capped at 5 s', async () => {
    const port = await freePort();
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [`tcp://${LOCAL}:${port}`] } } },
    });
    const call = await outcome(
      client.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 30000 }),
    );
    expect(call).toMatchObject({ ok: false, code: 'NotFound' });
    expect(call.ms).toBeGreaterThanOrEqual(4500);
    expect(call.ms).toBeLessThan(9000);
  }, 20000);

  it('a call started first succeeds when the server binds within the window', async () => {
    const port = await freePort();
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [`tcp://${LOCAL}:${port}`] } } },
    });
    const call = outcome(
      client.routeClient
        .requestToChannel('billing', 'echo', 'late server')
        .async<string>({ timeoutMs: 4000 }),
    );
    const send = outcome(
      client.routeClient.sendToChannel('billing', 'note', 'late note').async({ timeoutMs: 4000 }),
    );
    const notes: unknown[] = [];
    await new Promise((r) => setTimeout(r, 100)); // the calls are waiting now; nothing listens yet
    await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen: { port, bindHost: LOCAL } } } } },
      [
        ['request', 'echo', (p) => p],
        ['send', 'note', (p) => void notes.push(p)],
      ],
    );
    expect(await call).toMatchObject({ ok: true, value: 'late server' });
    expect(await send).toMatchObject({ ok: true });
    await waitFor(() => notes.length === 1, 5000, 'the late note');
  });

  it('a member that is ready but weight 0 does not cut the wait short while another server is still connecting', async () => {
    const port = await freePort();
    // The local server (weight 0) is ready within a millisecond; the remote one is not there yet.
    const a = await startRuntime(
      cleanup,
      {
        clientServer: {
          billing: { server: { listen, weight: 0 }, client: { connect: [`tcp://${LOCAL}:${port}`] } },
        },
      },
      [['request', 'echo', () => 'local']],
    );
    await waitFor(() => readyConnections(a, 'billing') === 1, 5000, 'the local connection ready');
    const call = outcome(
      a.routeClient.requestToChannel('billing', 'echo', 1).async<string>({ timeoutMs: 4000 }),
    );
    await new Promise((r) => setTimeout(r, 100));
    await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen: { port, bindHost: LOCAL } } } } },
      [['request', 'echo', () => 'remote']],
    );
    expect(await call).toMatchObject({ ok: true, value: 'remote' });

    // With every known server ready and excluded, there is nothing to wait for.
    a.setChannelWeight('billing', 0);
    const b = await startRuntime(cleanup, { clientServer: { billing: { server: { listen, weight: 0 } } } }, [
      ['request', 'echo', () => 'b'],
    ]);
    const c = await startRuntime(cleanup, {
      clientServer: {
        billing: { client: { connect: [b.endpoint('billing') as string, a.endpoint('billing') as string] } },
      },
    });
    await waitFor(() => readyConnections(c, 'billing') === 2, 5000, 'both ready');
    const fast = await outcome(
      c.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 4000 }),
    );
    expect(fast).toMatchObject({ ok: false, code: 'Unavailable' });
    expect(fast.ms).toBeLessThan(1000);
  });

  it('a weight-0 member and a server that never comes: the bounded wait ends Unavailable, not NotFound', async () => {
    const port = await freePort();
    const b = await startRuntime(cleanup, { clientServer: { billing: { server: { listen, weight: 0 } } } }, [
      ['request', 'echo', () => 'b'],
    ]);
    const c = await startRuntime(cleanup, {
      clientServer: {
        billing: { client: { connect: [b.endpoint('billing') as string, `tcp://${LOCAL}:${port}`] } },
      },
    });
    await waitFor(() => readyConnections(c, 'billing') === 1, 5000, 'b ready');
    const call = await outcome(
      c.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 300 }),
    );
    expect(call).toMatchObject({ ok: false, code: 'Unavailable' });
    expect(call.ms).toBeGreaterThanOrEqual(250);
    expect(call.ms).toBeLessThan(2000);
  });

  it('all candidates weight 0 → Unavailable', async () => {
    const s1 = await startRuntime(cleanup, { clientServer: { billing: { server: { listen, weight: 0 } } } }, [
      ['request', 'echo', (p) => p],
    ]);
    const s2 = await startRuntime(cleanup, { clientServer: { billing: { server: { listen, weight: 0 } } } }, [
      ['request', 'echo', (p) => p],
    ]);
    const client = await startRuntime(cleanup, {
      clientServer: {
        billing: {
          client: { connect: [s1.endpoint('billing') as string, s2.endpoint('billing') as string] },
        },
      },
    });
    await waitFor(() => readyConnections(client, 'billing') === 2, 5000, 'both connections ready');
    const request = await outcome(
      client.routeClient.requestToChannel('billing', 'echo', 1).async({ timeoutMs: 3000 }),
    );
    const send = await outcome(
      client.routeClient.sendToChannel('billing', 'echo', 1).async({ timeoutMs: 3000 }),
    );
    expect(request).toMatchObject({ ok: false, code: 'Unavailable' });
    expect(send).toMatchObject({ ok: false, code: 'Unavailable' });
    expect(request.ms).toBeLessThan(1000); // known members, none selectable: no waiting
  });

  it('a ClientServer call without a local Client role (server only) → NotConfigured, and the local handler never runs', async () => {
    const ran: unknown[] = [];
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['request', 'echo', (p) => ran.push(p)],
      ['send', 'echo', (p) => ran.push(p)],
    ]);
    await expect(server.routeClient.requestToChannel('billing', 'echo', 1).async()).rejects.toMatchObject({
      code: 'NotConfigured',
    });
    await expect(server.routeClient.sendToChannel('billing', 'echo', 1).async()).rejects.toMatchObject({
      code: 'NotConfigured',
    });
    expect(ran).toHaveLength(0);
  });

  it('unregistered ChannelName → NotFound, not sent on another registered channel', async () => {
    const ran: unknown[] = [];
    const runtime = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen }, client: {} } } },
      [['request', 'echo', (p) => ran.push(p)]],
    );
    await waitForCandidates(runtime, 'billing', 1);
    await expect(runtime.routeClient.requestToChannel('ledger', 'echo', 1).async()).rejects.toMatchObject({
      code: 'NotFound',
    });
    await expect(runtime.routeClient.sendToChannel('ledger', 'echo', 1).async()).rejects.toMatchObject({
      code: 'NotFound',
    });
    expect(ran).toHaveLength(0);
  });
});
