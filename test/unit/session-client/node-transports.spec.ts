import { afterEach, describe, expect, it } from '@jest/globals';
import {
  SESSION_PROTOCOL_VERSION,
  SessionCloseCode,
  SessionFrameKind,
  packr,
} from '../../../lib/core/wire/index.js';
import {
  type SessionClientClose,
  type SessionClientOptions,
  ZLinkSessionClient,
} from '../../../lib/session-client/index.js';
import { Cleanup, freePort, waitFor } from '../../helpers/index.js';
import {
  type ScriptedScheme,
  ScriptedSessionServer,
  TEST_TLS,
} from '../../helpers/scripted-session-server.js';

/**
 * The Node client over each carrier its endpoint's scheme picks (docs/sessions.md#the-node-client):
 * tcp and tls as length-prefixed byte streams, ws and wss as one binary message per frame body. Each
 * against a scripted server on a real socket (test/helpers/scripted-session-server.ts), TLS with the
 * test CA (test/fixtures/tls); the same session either way.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

async function server(scheme: ScriptedScheme): Promise<ScriptedSessionServer> {
  return cleanup.add(await ScriptedSessionServer.start(scheme));
}

const client = (options: SessionClientOptions): ZLinkSessionClient =>
  cleanup.add(new ZLinkSessionClient(options));

const secure = (scheme: ScriptedScheme) => scheme === 'tls' || scheme === 'wss';

describe.each(['tcp', 'tls', 'ws', 'wss'] as const)('the Node client over %s', (scheme) => {
  it('says Hello with its token, gets a reply and a push, and ends with its Close', async () => {
    const s = await server(scheme);
    const c = client({
      endpoint: s.endpoint,
      token: 'ticket',
      ...(secure(scheme) ? { tls: { ca: TEST_TLS.ca } } : {}),
    });
    const pushes: unknown[][] = [];
    const closes: SessionClientClose[] = [];
    c.on('push', (packet: string, msg: unknown) => pushes.push([packet, msg]));
    c.on('close', (close: SessionClientClose) => closes.push(close));
    expect(await c.connect()).toEqual({
      sessionId: 's-1',
      heartbeatMs: 60_000,
      maxFrameBytes: 1 << 20,
      maxInFlight: 64,
    });
    expect(await c.request('echo', { n: 1 })).toEqual({ n: 1 });
    expect(await c.request('push', 'hi')).toBe('ok');
    expect(pushes).toEqual([['pushed', 'hi']]);
    await c.close('normal', 'bye');
    expect(closes).toEqual([{ reason: 'normal', code: 1000, detail: 'bye', by: 'client' }]);
    await waitFor(() => s.of(SessionFrameKind.Close).length === 1, 5000, 'the Close');
    expect(s.frames).toEqual([
      [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, 'ticket'],
      [SessionFrameKind.Request, 1, 'echo', { n: 1 }],
      [SessionFrameKind.Request, 2, 'push', 'hi'],
      [SessionFrameKind.Close, SessionCloseCode.normal, 'bye'],
    ]);
  });

  it('rejects connect() with Unavailable when nothing listens there', async () => {
    const port = await freePort();
    const path = scheme === 'ws' || scheme === 'wss' ? '/play' : '';
    const c = client({ endpoint: `${scheme}://127.0.0.1:${port}${path}` });
    await expect(c.connect()).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'lost', by: 'connection' },
    });
  });
});

describe('the Node client over WebSocket', () => {
  it('sends each frame body as one binary message, with no length prefix', async () => {
    const s = await server('ws');
    const c = client({ endpoint: s.endpoint });
    await c.connect();
    c.send('note', 'a');
    c.send('note', 'b');
    await waitFor(() => s.messages.length === 3, 5000, 'three messages');
    expect(s.messages.map((m) => packr.unpack(m))).toEqual([
      [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, null],
      [SessionFrameKind.Send, 'note', 'a'],
      [SessionFrameKind.Send, 'note', 'b'],
    ]);
  });

  it('ends the session as protocolError on a text message from the server', async () => {
    const s = await server('ws');
    const c = client({ endpoint: s.endpoint, reconnect: { initialMs: 10 } });
    const closes: SessionClientClose[] = [];
    c.on('close', (close: SessionClientClose) => closes.push(close));
    await c.connect();
    s.latest().raw('hello');
    await waitFor(() => closes.length === 1, 5000, 'close');
    expect(closes[0]).toMatchObject({
      reason: 'protocolError',
      by: 'connection',
      detail: expect.stringContaining('text message'),
    });
  });

  it('reaches a listener on its path only: another path fails the upgrade', async () => {
    const s = await server('ws');
    const c = client({ endpoint: `ws://127.0.0.1:${s.port}/elsewhere` });
    await expect(c.connect()).rejects.toMatchObject({ code: 'Unavailable' });
    expect(s.frames).toEqual([]);
  });
});

describe.each(['tls', 'wss'] as const)('the Node client over %s checks the server', (scheme) => {
  it("refuses a certificate no trusted CA signed (Node's bundled roots by default)", async () => {
    const s = await server(scheme);
    const c = client({ endpoint: s.endpoint });
    await expect(c.connect()).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'lost', detail: expect.stringMatching(/certificate/i) },
    });
    expect(s.frames).toEqual([]);
  });

  it('refuses a certificate that does not name the server (tls.servername)', async () => {
    const s = await server(scheme);
    const c = client({ endpoint: s.endpoint, tls: { ca: TEST_TLS.ca, servername: 'game.example.com' } });
    await expect(c.connect()).rejects.toMatchObject({
      code: 'Unavailable',
      details: { detail: expect.stringContaining('game.example.com') },
    });
  });

  it('checks the name it connects by: localhost is on the test certificate', async () => {
    const s = await server(scheme);
    const endpoint = s.endpoint.replace('127.0.0.1', 'localhost');
    const c = client({ endpoint, tls: { ca: [TEST_TLS.ca.toString('utf8')] } });
    await expect(c.connect()).resolves.toMatchObject({ sessionId: 's-1' });
  });

  it('takes any certificate with rejectUnauthorized: false', async () => {
    const s = await server(scheme);
    const c = client({ endpoint: s.endpoint, tls: { rejectUnauthorized: false } });
    await expect(c.connect()).resolves.toMatchObject({ sessionId: 's-1' });
  });
});

describe('the Node client refuses a bad endpoint or tls option at once, naming the field', () => {
  const refusal = (field: string) => expect.objectContaining({ code: 'Configuration', details: { field } });

  const pem = TEST_TLS.ca.toString('utf8');
  it.each([
    [{ endpoint: 'tcp://127.0.0.1:7000', tls: {} }, 'tls'],
    [{ endpoint: 'ws://127.0.0.1:7000/play', tls: { ca: pem } }, 'tls'],
    [{ host: '127.0.0.1', port: 7000, tls: {} }, 'tls'],
    [{ endpoint: 'tls://127.0.0.1:7000', tls: 'yes' }, 'tls'],
    [{ endpoint: 'tls://127.0.0.1:7000', tls: { ca: 'test/fixtures/tls/ca.crt' } }, 'tls.ca'],
    [{ endpoint: 'tls://127.0.0.1:7000', tls: { ca: [pem, 42] } }, 'tls.ca'],
    [
      { endpoint: 'tls://127.0.0.1:7000', tls: { ca: pem.replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!') } },
      'tls.ca',
    ],
    [{ endpoint: 'wss://127.0.0.1:7000/play', tls: { servername: '' } }, 'tls.servername'],
    [{ endpoint: 'wss://127.0.0.1:7000/play', tls: { rejectUnauthorized: 'no' } }, 'tls.rejectUnauthorized'],
    [{ endpoint: 'udp://127.0.0.1:7000' }, 'endpoint'],
    [{ endpoint: 'tls://127.0.0.1:7000/play' }, 'endpoint'],
  ])('%#: %j → %s', (options, field) => {
    expect(() => new ZLinkSessionClient(options as unknown as SessionClientOptions)).toThrow(refusal(field));
  });
});
