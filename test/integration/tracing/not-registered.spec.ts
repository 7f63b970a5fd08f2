/**
 * `@opentelemetry/api` installed but nothing registered when the runtime starts: the runtime does
 * not load it and no hook exists, so even a span context made active later travels nowhere (real
 * sockets, ClientServer). Register OpenTelemetry before starting the runtime, as its SDK asks anyway.
 */
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Cleanup } from '../../helpers/index.js';
import { listen, startRuntime } from '../client-server/harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());
afterAll(() => {
  context.disable();
  propagation.disable();
});

describe('OpenTelemetry installed, nothing registered at start', () => {
  it('the runtime loads no hook: a span context active later carries nothing', async () => {
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')]).toBeUndefined();
    const see = () => trace.getSpanContext(context.active())?.traceId ?? 'none';
    const server = await startRuntime(cleanup, { clientServer: { billing: { server: { listen } } } }, [
      ['request', 'see', see],
    ]);
    const client = await startRuntime(cleanup, {
      clientServer: { billing: { client: { connect: [server.endpoint('billing') as string] } } },
    });
    await client.waitForCandidates('billing', 1, 5000);
    // Registered only now, after both runtimes started.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const span = { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 };
    const seen = await context.with(trace.setSpanContext(context.active(), span), () =>
      client.routeClient.requestToChannel('billing', 'see', {}).async<string>({ timeoutMs: 5000 }),
    );
    expect(seen).toBe('none');
  });
});
