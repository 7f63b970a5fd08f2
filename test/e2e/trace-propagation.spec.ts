/**
 * Issue 7 item 5 between processes: this process and a Nest server child both register
 * OpenTelemetry (async-hooks context manager, W3C propagator). A call made inside an active span
 * context here is handled there inside the same trace (ClientServer and RouteMesh Node direct);
 * the child's handler calls back here and that handler sees the trace too — one trace id observed
 * on both sides. Application metadata carries only what the caller set.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type SpanContext, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { ZLinkRuntime } from '../../lib/runtime/index.js';
import { ChildApp } from '../helpers/child-app.js';

interface Seen {
  readonly pid: number;
  readonly traceId: string | undefined;
  readonly metadata: Record<string, string>;
}

const listen = { port: 0, bindHost: '127.0.0.1' };
const span: SpanContext = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  traceFlags: 1,
};
const inSpan = <T>(fn: () => T): T => context.with(trace.setSpanContext(context.active(), span), fn);

describe('trace propagation between processes', () => {
  let child: ChildApp | undefined;
  const runtimes: ZLinkRuntime[] = [];
  let caller: ZLinkRuntime;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    // The child's onward calls land here.
    const back = new ZLinkRuntime({ clientServer: { back: { server: { listen } } } });
    runtimes.push(back);
    back.registerChannelHandler({
      channel: 'back',
      kind: 'request',
      packet: 'back.see',
      source: 'test.back',
      handler: () => ({ pid: process.pid, traceId: trace.getSpanContext(context.active())?.traceId }),
    });
    await back.start();
    child = new ChildApp('traced-server', 'e2e/traced-server.app.js', { back: back.endpoint('back') });
    const ready = await child.next('ready', 30000);
    caller = new ZLinkRuntime({
      clientServer: { traced: { client: { connect: [ready.endpoint as string] } } },
      meshes: { game: { rid: 'caller', listen, peers: [ready.meshEndpoint as string] } },
    });
    runtimes.push(caller);
    await caller.start();
    await caller.waitForCandidates('traced', 1, 10000);
    await caller.waitForPeers('game', 1, 10000);
  }, 60000);

  afterAll(async () => {
    try {
      if (child) await child.call({ type: 'shutdown' }, 10000).catch(() => undefined);
    } finally {
      child?.kill();
      await child?.exited;
      for (const runtime of runtimes.reverse()) await runtime.close();
      context.disable();
      propagation.disable();
    }
  });

  it('ClientServer: the child handler sees this trace id; metadata is only what was set', async () => {
    const reply = await inSpan(() =>
      caller.routeClient
        .requestToChannel('traced', 'trace.see', {})
        .metadata('tenant-id', 't-1')
        .async<Seen>({ timeoutMs: 10000 }),
    );
    expect(reply.pid).not.toBe(process.pid);
    expect(reply.traceId).toBe(span.traceId);
    expect(reply.metadata).toEqual({ 'tenant-id': 't-1' });
  });

  it('RouteMesh Node direct: the child node handler sees this trace id', async () => {
    const reply = await inSpan(() =>
      caller.routeClient
        .requestToNode('game', 'traced-child', 'trace.see', {})
        .async<Seen>({ timeoutMs: 10000 }),
    );
    expect(reply.pid).not.toBe(process.pid);
    expect(reply.traceId).toBe(span.traceId);
  });

  it('onward: the child calls back into this process, whose handler sees the same trace id', async () => {
    const reply = await inSpan(() =>
      caller.routeClient
        .requestToChannel('traced', 'trace.onward', {})
        .async<{ here: Seen; back: Seen }>({ timeoutMs: 10000 }),
    );
    expect(reply.here.traceId).toBe(span.traceId);
    expect(reply.back).toEqual({ pid: process.pid, traceId: span.traceId });
  });

  it('without an active span context nothing travels: the child sees no trace', async () => {
    const reply = await caller.routeClient
      .requestToChannel('traced', 'trace.see', {})
      .async<Seen>({ timeoutMs: 10000 });
    expect(reply.traceId).toBeUndefined();
    expect(reply.metadata).toEqual({});
  });
});
