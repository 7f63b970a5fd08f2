import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkRuntime } from '../../../lib/index.js';
import { type SessionClientClose, ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { Cleanup } from '../../helpers/index.js';
import { TEST_TLS } from '../../helpers/scripted-session-server.js';
import { LISTENER_TLS, endpointsOf, startScriptedGateway } from './scripted-gateway.js';

/**
 * The Node client against a real gateway listening on every kind at once (tcp, tls, websocket,
 * websocket with TLS): each endpoint the gateway gives picks its transport, and each gives the same
 * session — Hello with a token, a reply, a push, a refusal, the client's own Close.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const LISTEN = [
  { kind: 'tcp', bindHost: '127.0.0.1', port: 0 },
  { kind: 'tls', bindHost: '127.0.0.1', port: 0, tls: LISTENER_TLS },
  { kind: 'websocket', bindHost: '127.0.0.1', port: 0, path: '/play' },
  { kind: 'websocket', bindHost: '127.0.0.1', port: 0, path: '/play', tls: LISTENER_TLS },
];

/** The gateway's entry `entry` and a client of it with `token` (trusting the test CA on tls and wss). */
async function clientOf(entry: number, token: string): Promise<ZLinkSessionClient> {
  const runtime: ZLinkRuntime = cleanup.add(await startScriptedGateway(LISTEN));
  const endpoint = endpointsOf(runtime)[entry] as string;
  const tls = /^(tls|wss):/.test(endpoint) ? { tls: { ca: TEST_TLS.ca } } : {};
  return cleanup.add(new ZLinkSessionClient({ endpoint, token, ...tls }));
}

describe('the Node client on each listener kind of one gateway', () => {
  it('finds the endpoints in order: tcp, tls, ws, wss', async () => {
    const runtime = cleanup.add(await startScriptedGateway(LISTEN));
    expect(endpointsOf(runtime)).toEqual([
      expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/),
      expect.stringMatching(/^tls:\/\/127\.0\.0\.1:\d+$/),
      expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+\/play$/),
      expect.stringMatching(/^wss:\/\/127\.0\.0\.1:\d+\/play$/),
    ]);
  });

  it.each([0, 1, 2, 3])('over endpoint %i: token, reply, push, then its own Close', async (entry) => {
    const c = await clientOf(entry, 'ticket');
    const pushes: unknown[][] = [];
    const closes: SessionClientClose[] = [];
    c.on('push', (packet: string, msg: unknown) => pushes.push([packet, msg]));
    c.on('close', (close: SessionClientClose) => closes.push(close));
    await c.connect();
    expect(await c.request('echo', { n: 1 })).toEqual({ n: 1 });
    expect(await c.request('push', 'hey')).toBe('ok');
    expect(pushes).toEqual([['pushed', 'hey']]);
    await c.close();
    expect(closes).toEqual([{ reason: 'normal', code: 1000, detail: '', by: 'client' }]);
  });

  it.each([0, 1, 2, 3])('over endpoint %i: a bad token is refused', async (entry) => {
    const c = await clientOf(entry, 'forged');
    await expect(c.connect()).rejects.toMatchObject({ code: 'Unavailable', details: { reason: 'refused' } });
  });
});
