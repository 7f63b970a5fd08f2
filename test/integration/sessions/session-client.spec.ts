import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import {
  type SessionClientClose,
  type SessionClientOptions,
  ZLinkSessionClient,
} from '../../../lib/session-client/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { gatewayOptions, startGateway } from './harness.js';

/**
 * The Node session client against a real listener over TCP: it connects to the listener's endpoint as
 * `runtime.sessions.endpoint()` gives it, refuses a malformed one at once, and its events come in the
 * order docs/sessions.md#the-node-client gives, each `close` saying who ended the session.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

function client(options: SessionClientOptions): ZLinkSessionClient {
  const c = new ZLinkSessionClient(options);
  cleanup.add({ close: () => c.close() });
  return c;
}

/** Every event of `c`, in order, as [name, first argument]. */
function record(c: ZLinkSessionClient): [string, unknown][] {
  const seen: [string, unknown][] = [];
  for (const name of ['open', 'close', 'reconnecting', 'push'])
    c.on(name, (first: unknown) => seen.push([name, first]));
  return seen;
}

describe('session client', () => {
  it("connects to the listener's endpoint as the listener gives it", async () => {
    const runtime = cleanup.add(
      await startGateway(gatewayOptions(), { handlers: { echo: { fn: (p) => p } } }),
    );
    const endpoint = runtime.sessions.endpoint('game') as string;
    expect(endpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    const c = client({ endpoint });
    await c.connect();
    expect(await c.request('echo', 'hi')).toBe('hi');
  });

  it.each([
    ['127.0.0.1:5000', 'endpoint'],
    ['tcp://127.0.0.1', 'endpoint'],
    ['tcp://127.0.0.1:0', 'endpoint'],
    ['tcp://127.0.0.1:70000', 'endpoint'],
    ['ipc:///tmp/game', 'endpoint'],
  ])('refuses the malformed endpoint %j with a Configuration error naming it', (endpoint, field) => {
    expect(() => new ZLinkSessionClient({ endpoint })).toThrow(
      expect.objectContaining({
        code: 'Configuration',
        details: { field },
        message: expect.stringContaining(JSON.stringify(endpoint)),
      }),
    );
  });

  it('takes an IPv6 endpoint and host and port alike', () => {
    expect(() => new ZLinkSessionClient({ endpoint: 'tcp://[::1]:7000' })).not.toThrow();
    expect(() => new ZLinkSessionClient({ host: '127.0.0.1', port: 7000 })).not.toThrow();
    expect(() => new ZLinkSessionClient({ host: '127.0.0.1', port: 0 })).toThrow(
      expect.objectContaining({ code: 'Configuration', details: { field: 'port' } }),
    );
  });

  it("reports its own reason after its own close(), by: 'client'", async () => {
    const runtime = cleanup.add(await startGateway(gatewayOptions()));
    const c = client({ endpoint: runtime.sessions.endpoint('game') as string });
    const seen = record(c);
    const welcome = await c.connect();
    await c.close();
    expect(seen).toEqual([
      ['open', welcome],
      ['close', { reason: 'normal', code: 1000, detail: '', by: 'client' }],
    ]);

    const d = client({ endpoint: runtime.sessions.endpoint('game') as string });
    const closes: SessionClientClose[] = [];
    d.on('close', (close: SessionClientClose) => closes.push(close));
    await d.connect();
    await d.close('goingAway', 'moving to another server');
    expect(closes).toEqual([
      { reason: 'goingAway', code: 1001, detail: 'moving to another server', by: 'client' },
    ]);
  });

  it("orders its events: open, push, close (the server's, by: 'server'), reconnecting, open", async () => {
    const runtime = cleanup.add(
      await startGateway(gatewayOptions(), {
        handlers: {
          kick: {
            fn: (_p, ctx) => {
              const { session } = ctx as ZLinkSessionContext;
              session.push('bye', 'soon');
              setImmediate(() => session.close('goingAway', 'kicked'));
              return 'ok';
            },
          },
        },
      }),
    );
    const c = client({
      endpoint: runtime.sessions.endpoint('game') as string,
      reconnect: { initialMs: 20, maxMs: 40 },
    });
    const seen = record(c);
    const first = await c.connect();
    expect(await c.request('kick')).toBe('ok');
    await waitFor(() => seen.filter(([name]) => name === 'open').length === 2, 5000, 'the second open');
    await c.close();
    expect(seen.map(([name]) => name)).toEqual(['open', 'push', 'close', 'reconnecting', 'open', 'close']);
    expect(seen[0]).toEqual(['open', first]);
    expect(seen[1]).toEqual(['push', 'bye']);
    expect(seen[2]).toEqual(['close', { reason: 'goingAway', code: 1001, detail: 'kicked', by: 'server' }]);
    expect(seen[3]?.[1]).toEqual(expect.any(Number));
    expect((seen[4]?.[1] as { sessionId: string }).sessionId).not.toBe(first.sessionId);
    expect(seen[5]).toEqual(['close', { reason: 'normal', code: 1000, detail: '', by: 'client' }]);
  });
});
