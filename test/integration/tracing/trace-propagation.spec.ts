/**
 * Issue 7 item 5, docs/protocol.md#metadata over real sockets: with OpenTelemetry registered and a span context active,
 * the caller's W3C trace context travels as a framework field (never application metadata) and the
 * handler runs inside it — ClientServer, RouteMesh select-one and Node direct, and onward from a
 * handler to the next hop. With no active context (or `tracing: 'off'`) nothing travels.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { type SpanContext, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  type ChannelHandlerFn,
  type NodeHandlerFn,
  RecordKind,
  type SendRecord,
  type ZLinkMessageContext,
} from '../../../lib/core/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { FakeServer, fakeState, listen, startRuntime } from '../client-server/harness.js';
import { endpointOf, startNode } from '../route-mesh/harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  context.disable();
  propagation.disable();
});

let next = 1;
/** A fresh sampled span context (valid W3C ids). */
function spanContext(): SpanContext {
  const n = (next++).toString(16);
  return { traceId: n.padStart(32, 'a'), spanId: n.padStart(16, 'b'), traceFlags: 1 };
}

/** Runs `fn` with `span` as the active span context, as instrumented application code would. */
function inSpan<T>(span: SpanContext, fn: () => T): T {
  return context.with(trace.setSpanContext(context.active(), span), fn);
}

interface Seen {
  readonly traceId: string | undefined;
  readonly spanId: string | undefined;
  readonly metadata: Record<string, string>;
}

/** What a handler sees of the active trace context — after an await, to prove it survives one. */
async function seen(metadata: Readonly<Record<string, string>>): Promise<Seen> {
  await new Promise((resolve) => setTimeout(resolve, 1));
  const span = trace.getSpanContext(context.active());
  return { traceId: span?.traceId, spanId: span?.spanId, metadata: { ...metadata } };
}

const seeTrace: ChannelHandlerFn = (_payload, ctx) => seen((ctx as ZLinkMessageContext).metadata);
const seeTraceNode: NodeHandlerFn = (_payload, ctx) => seen(ctx.metadata);

describe('ClientServer', () => {
  async function pair(clientTracing?: 'auto' | 'off', serverTracing?: 'auto' | 'off') {
    const notes: Seen[] = [];
    const server = await startRuntime(
      cleanup,
      { clientServer: { billing: { server: { listen } } }, tracing: serverTracing },
      [
        ['request', 'see', seeTrace],
        ['send', 'note', async (_p, ctx) => void notes.push(await seen(ctx.metadata))],
      ],
    );
    const endpoint = server.endpoint('billing') as string;
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [endpoint] } } },
      tracing: clientTracing,
    });
    await client.waitForCandidates('billing', 1, 5000);
    return { client, notes };
  }

  it('a request carries the active trace: the handler sees the caller trace id; metadata is only what the caller set', async () => {
    const { client } = await pair();
    const span = spanContext();
    const reply = await inSpan(span, () =>
      client.routeClient
        .requestToChannel('billing', 'see', {})
        .metadata('tenant-id', 't-1')
        .async<Seen>({ timeoutMs: 5000 }),
    );
    // No span is created by the framework: the handler's parent is the caller's span.
    expect(reply).toEqual({ traceId: span.traceId, spanId: span.spanId, metadata: { 'tenant-id': 't-1' } });
  });

  it('a one-way send carries it too', async () => {
    const { client, notes } = await pair();
    const span = spanContext();
    await inSpan(span, () => client.routeClient.sendToChannel('billing', 'note', {}).async());
    await waitFor(() => notes.length === 1, 5000, 'the send handler ran');
    expect(notes[0]).toEqual({ traceId: span.traceId, spanId: span.spanId, metadata: {} });
  });

  it('with no active span context the handler runs with none (and the next traced call is not confused)', async () => {
    const { client } = await pair();
    const plain = await client.routeClient.requestToChannel('billing', 'see', {}).async<Seen>();
    expect(plain).toEqual({ traceId: undefined, spanId: undefined, metadata: {} });
    const span = spanContext();
    const traced = await inSpan(span, () =>
      client.routeClient.requestToChannel('billing', 'see', {}).async<Seen>(),
    );
    expect(traced.traceId).toBe(span.traceId);
    const again = await client.routeClient.requestToChannel('billing', 'see', {}).async<Seen>();
    expect(again.traceId).toBeUndefined();
  });

  it("tracing: 'off' on the server: a traced record arrives but the handler runs outside it", async () => {
    const { client } = await pair('auto', 'off');
    const reply = await inSpan(spanContext(), () =>
      client.routeClient.requestToChannel('billing', 'see', {}).async<Seen>(),
    );
    expect(reply.traceId).toBeUndefined();
  });

  it("the framework field on the wire: traceparent with an active span, nothing without one or with tracing: 'off'", async () => {
    const fake = cleanup.add(await new FakeServer(fakeState('billing')).bind());
    const connect = { clientServer: { billing: { client: { connect: [fake.endpoint] } } } };
    const client = await startRuntime(cleanup, connect);
    const off = await startRuntime(cleanup, { ...connect, tracing: 'off' });
    await client.waitForCandidates('billing', 1, 5000);
    await off.waitForCandidates('billing', 1, 5000);
    const span = spanContext();
    await inSpan(span, () => client.routeClient.sendToChannel('billing', 'traced', {}).async());
    await client.routeClient.sendToChannel('billing', 'plain', {}).async();
    await inSpan(span, () => off.routeClient.sendToChannel('billing', 'off', {}).async());
    const sends = () => fake.received.map((r) => r.record).filter((r) => r.kind === RecordKind.Send);
    await waitFor(() => sends().length === 3, 5000, 'three sends at the fake server');
    const byPacket = new Map(sends().map((r) => [(r as SendRecord).packet, r as SendRecord]));
    expect(byPacket.get('traced')?.trace).toEqual({
      traceparent: `00-${span.traceId}-${span.spanId}-01`,
      tracestate: undefined,
    });
    expect(byPacket.get('traced')?.metadata).toBeUndefined();
    expect(byPacket.get('plain')?.trace).toBeUndefined();
    expect(byPacket.get('off')?.trace).toBeUndefined();
  });
});

describe('RouteMesh', () => {
  it('select-one: the Server member handler sees the caller trace id', async () => {
    const b = await startNode(cleanup, {
      rid: 'node-b',
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'see', seeTrace]],
    });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b)],
      channels: { match: { role: 'client' } },
    });
    await a.waitForCandidates('match', 1, 5000);
    const span = spanContext();
    const reply = await inSpan(span, () =>
      a.routeClient.requestToChannel('match', 'see', {}).metadata('k', 'v').async<Seen>({ timeoutMs: 5000 }),
    );
    expect(reply).toEqual({ traceId: span.traceId, spanId: span.spanId, metadata: { k: 'v' } });
    const plain = await a.routeClient.requestToChannel('match', 'see', {}).async<Seen>();
    expect(plain.traceId).toBeUndefined();
  });

  it('Node direct: request and send handlers see the caller trace id', async () => {
    const notes: Seen[] = [];
    const b = await startNode(cleanup, {
      rid: 'node-b',
      nodeHandlers: [
        ['request', 'see', seeTraceNode],
        ['send', 'note', async (_p, ctx) => void notes.push(await seen(ctx.metadata))],
      ],
    });
    const a = await startNode(cleanup, { rid: 'node-a', peers: [endpointOf(b)] });
    await a.waitForPeers('game', 1);
    const span = spanContext();
    const reply = await inSpan(span, () =>
      a.routeClient.requestToNode('game', 'node-b', 'see', {}).async<Seen>({ timeoutMs: 5000 }),
    );
    expect(reply).toEqual({ traceId: span.traceId, spanId: span.spanId, metadata: {} });
    await inSpan(span, () => a.routeClient.sendToNode('game', 'node-b', 'note', {}).async());
    await waitFor(() => notes.length === 1, 5000, 'the Node direct send handler ran');
    expect(notes[0]?.traceId).toBe(span.traceId);
  });
});

describe('onward from a handler', () => {
  it('a handler that calls on (ClientServer → RouteMesh → Node direct) propagates the trace; metadata does not follow', async () => {
    // Last hop: a Node direct handler on node-c.
    const c = await startNode(cleanup, { rid: 'node-c', nodeHandlers: [['request', 'see', seeTraceNode]] });
    // Middle hop: node-b serves 'match' and calls node-c from inside its handler.
    const b = await startNode(cleanup, {
      rid: 'node-b',
      peers: [endpointOf(c)],
      channels: { match: { role: 'server' } },
      handlers: [
        [
          'match',
          'request',
          'relay',
          async (_p, ctx) => ({
            here: await seen(ctx.metadata),
            next: await b.routeClient.requestToNode('game', 'node-c', 'see', {}).async<Seen>(),
          }),
        ],
      ],
    });
    await b.waitForPeers('game', 1);
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b)],
      channels: { match: { role: 'client' } },
    });
    await a.waitForCandidates('match', 1, 5000);
    // First hop: a ClientServer server whose handler calls on over the mesh.
    const front = await startRuntime(cleanup, { clientServer: { front: { server: { listen } } } }, [
      [
        'request',
        'enter',
        async () => a.routeClient.requestToChannel('match', 'relay', {}).metadata('only', 'a→b').async(),
      ],
    ]);
    const caller = await startRuntime(cleanup, {
      clientServer: { front: { client: { connect: [front.endpoint('front') as string] } } },
    });
    await caller.waitForCandidates('front', 1, 5000);
    const span = spanContext();
    const reply = await inSpan(span, () =>
      caller.routeClient
        .requestToChannel('front', 'enter', {})
        .metadata('tenant-id', 't-9')
        .async<{ here: Seen; next: Seen }>({ timeoutMs: 10000 }),
    );
    expect(reply.here).toEqual({ traceId: span.traceId, spanId: span.spanId, metadata: { only: 'a→b' } });
    expect(reply.next).toEqual({ traceId: span.traceId, spanId: span.spanId, metadata: {} });
  });
});
