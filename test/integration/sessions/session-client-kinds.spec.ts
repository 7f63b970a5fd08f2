import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import type { ZLinkRuntime } from '../../../lib/index.js';
import {
  type SessionClientClose,
  type SessionClientOptions,
  ZLinkSessionClient,
} from '../../../lib/session-client/index.js';
import { Cleanup } from '../../helpers/index.js';
import { TEST_TLS } from '../../helpers/scripted-session-server.js';
import { gatewayOptions, startGateway } from './harness.js';

/**
 * The Node client against a real gateway listening on every kind at once (tcp, tls, websocket,
 * websocket with TLS): each endpoint the gateway gives picks its transport, and each gives the same
 * session — Hello with a token, a reply, a push, a refusal, the client's own Close.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const TLS = { key: TEST_TLS.key, cert: TEST_TLS.cert };
const LISTEN = [
  { kind: 'tcp', bindHost: '127.0.0.1', port: 0 },
  { kind: 'tls', bindHost: '127.0.0.1', port: 0, tls: TLS },
  { kind: 'websocket', bindHost: '127.0.0.1', port: 0, path: '/play' },
  { kind: 'websocket', bindHost: '127.0.0.1', port: 0, path: '/play', tls: TLS },
];

/** `runtime.sessions.endpoints(name)`: every entry's endpoint, in order (docs/sessions.md). */
function endpointsOf(runtime: ZLinkRuntime): string[] {
  // TODO(lead): call runtime.sessions.endpoints directly once the listener kinds are merged.
  return (runtime.sessions as unknown as { endpoints(name: string): string[] }).endpoints('game');
}

function client(options: SessionClientOptions): ZLinkSessionClient {
  const c = new ZLinkSessionClient(options);
  cleanup.add({ close: () => c.close() });
  return c;
}

function startPlayGateway(): Promise<ZLinkRuntime> {
  return startGateway(gatewayOptions({ listen: LISTEN }), {
    handlers: {
      echo: { fn: (p) => p },
      shout: {
        fn: (p, ctx) => {
          (ctx as ZLinkSessionContext).session.push('shouted', p);
          return 'ok';
        },
      },
    },
    onOpen: (_session, hello) => (hello as { token: unknown }).token === 'ticket',
  });
}

// TODO(lead): enable once the tls and websocket kinds are wired
describe.skip('the Node client on each listener kind of one gateway', () => {
  it('finds the endpoints in order: tcp, tls, ws, wss', async () => {
    const runtime = cleanup.add(await startPlayGateway());
    expect(endpointsOf(runtime)).toEqual([
      expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/),
      expect.stringMatching(/^tls:\/\/127\.0\.0\.1:\d+$/),
      expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+\/play$/),
      expect.stringMatching(/^wss:\/\/127\.0\.0\.1:\d+\/play$/),
    ]);
  });

  it.each([0, 1, 2, 3])('over endpoint %i: token, reply, push, then its own Close', async (entry) => {
    const runtime = cleanup.add(await startPlayGateway());
    const endpoint = endpointsOf(runtime)[entry] as string;
    const c = client({
      endpoint,
      token: 'ticket',
      ...(/^(tls|wss):/.test(endpoint) ? { tls: { ca: TEST_TLS.ca } } : {}),
    });
    const pushes: unknown[][] = [];
    const closes: SessionClientClose[] = [];
    c.on('push', (packet: string, msg: unknown) => pushes.push([packet, msg]));
    c.on('close', (close: SessionClientClose) => closes.push(close));
    await c.connect();
    expect(await c.request('echo', { n: 1 })).toEqual({ n: 1 });
    expect(await c.request('shout', 'hey')).toBe('ok');
    expect(pushes).toEqual([['shouted', 'hey']]);
    await c.close();
    expect(closes).toEqual([{ reason: 'normal', code: 1000, detail: '', by: 'client' }]);
  });

  it.each([0, 1, 2, 3])('over endpoint %i: a bad token is refused', async (entry) => {
    const runtime = cleanup.add(await startPlayGateway());
    const endpoint = endpointsOf(runtime)[entry] as string;
    const c = client({
      endpoint,
      token: 'forged',
      ...(/^(tls|wss):/.test(endpoint) ? { tls: { ca: TEST_TLS.ca } } : {}),
    });
    await expect(c.connect()).rejects.toMatchObject({ code: 'Unavailable', details: { reason: 'refused' } });
  });
});
