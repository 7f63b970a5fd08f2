/**
 * Runtime lifecycle around start and close: what calls see before, during and after start, a close
 * that lands during start, and startup errors that name the option to change.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, outcome, within } from '../../helpers/index.js';
import { LOCAL, listen } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

function both(): ZLinkRuntime {
  const runtime = cleanup.add(
    new ZLinkRuntime({ clientServer: { billing: { server: { listen }, client: {} } } }),
  );
  runtime.registerChannelHandler({
    channel: 'billing',
    kind: 'request',
    packet: 'echo',
    handler: (p) => p,
    source: 'test.echo',
  });
  return runtime;
}

describe('runtime lifecycle', () => {
  it('a call before start() ends Unavailable at once, naming the reason', async () => {
    const runtime = both();
    const o = await within(outcome(runtime.routeClient.requestToChannel('billing', 'echo', 1).async()), 1000);
    expect(o).toMatchObject({ ok: false, code: 'Unavailable' });
    expect((o as { error: Error }).error.message).toContain('has not started');
  });

  it('a call made while start() runs waits for it and then succeeds', async () => {
    const runtime = both();
    const starting = runtime.start();
    const reply = runtime.routeClient.requestToChannel('billing', 'echo', 'hi').async({ timeoutMs: 5000 });
    await starting;
    await expect(within(reply, 5000)).resolves.toBe('hi');
  });

  it('close() during start(): start rejects Shutdown, nothing is left open, later calls end Shutdown', async () => {
    const runtime = both();
    const starting = outcome(runtime.start());
    await within(runtime.close(), 5000, 'close');
    expect(await within(starting, 5000, 'start')).toMatchObject({ ok: false, code: 'Shutdown' });
    expect(runtime.snapshot().channels[0]?.client).toBeUndefined();
    expect(await outcome(runtime.routeClient.requestToChannel('billing', 'echo', 1).async())).toMatchObject({
      ok: false,
      code: 'Shutdown',
    });
  });

  it('a listener that cannot bind fails start with Configuration naming the listen option', async () => {
    const first = both();
    await first.start();
    const port = Number(/:(\d+)$/.exec(first.endpoint('billing') ?? '')?.[1]);
    const second = cleanup.add(
      new ZLinkRuntime({ clientServer: { billing: { server: { listen: { port, bindHost: LOCAL } } } } }),
    );
    const o = await outcome(second.start());
    expect(o).toMatchObject({ ok: false, code: 'Configuration' });
    expect((o as { error: Error }).error.message).toContain('clientServer.billing.server.listen');
  });

  it('a Client with no endpoint and no local Server fails at construction (discovery needs a store)', () => {
    expect(() => new ZLinkRuntime({ clientServer: { billing: { client: {} } } })).toThrow(
      expect.objectContaining({
        code: 'Configuration',
        message: expect.stringContaining('clientServer.billing.client.connect'),
      }),
    );
  });
});

describe('bad call arguments end InvalidArgument before anything is selected or sent', () => {
  it.each([
    [
      'metadata(null)',
      (r: ZLinkRuntime) => r.routeClient.requestToChannel('billing', 'echo', 1).metadata(null as never),
    ],
    [
      'metadata([])',
      (r: ZLinkRuntime) => r.routeClient.requestToChannel('billing', 'echo', 1).metadata([] as never),
    ],
    ['a non-string packet', (r: ZLinkRuntime) => r.routeClient.requestToChannel('billing', 42 as never, 1)],
    ['an empty packet', (r: ZLinkRuntime) => r.routeClient.requestToChannel('billing', '', 1)],
    [
      'a non-string channel',
      (r: ZLinkRuntime) => r.routeClient.requestToChannel(undefined as never, 'echo', 1),
    ],
  ])('%s', async (_name, make) => {
    const runtime = both();
    await runtime.start();
    const o = await within(outcome(make(runtime).async({ timeoutMs: 5000 })), 2000);
    expect(o).toMatchObject({ ok: false, code: 'InvalidArgument' });
  });
});
