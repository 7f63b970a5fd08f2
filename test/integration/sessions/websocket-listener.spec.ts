import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { RemoteAddress, SessionLinkHandler } from '../../../lib/core/index.js';
import type { UpgradeRefusal, ZLinkRuntime } from '../../../lib/index.js';
import { WebSocketSessionListener } from '../../../lib/transport/index.js';
import { type NormalizedSessionListen, TrustedProxies } from '../../../lib/core/options/index.js';
import { play } from '../../../examples/sessions/browser-socket.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { type GatewaySetup, gatewayOptions, startGateway } from './harness.js';
import { Opcode, RawWs, WsPeer, binaryFrame, packr, rawHttp, upgradeRequest, wsFrame } from './ws-peers.js';

/**
 * The WebSocket session listener in one process, driven by a real runtime's session host (its
 * handlers and hooks) and reached over real sockets: a `ws` client (what a browser does) gets its
 * Welcome, replies and pushes over `ws` and `wss`; every refused upgrade is answered over HTTP with
 * its status and counted; every WebSocket-level fault closes only its connection with its code; a
 * connection that never upgrades, or never says Hello, is closed in time; a client that reads
 * nothing is dropped `slowConsumer`. After each, a good client is still served.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const TLS_DIR = 'test/fixtures/tls';
const tlsFile = (name: string): Buffer => readFileSync(`${TLS_DIR}/${name}`);
const MAX_FRAME = 1024;

const HANDLERS: GatewaySetup['handlers'] = {
  echo: { fn: (p) => p },
  note: {
    kind: 'send',
    fn: (p, ctx) =>
      void (ctx as { session: { push(packet: string, msg: unknown): boolean } }).session.push('noted', {
        got: p,
      }),
  },
  flood: {
    fn: (p, ctx) => {
      const session = (ctx as { session: { push(packet: string, msg: unknown): boolean } }).session;
      const body = Buffer.alloc((p as { bytes: number }).bytes, 7);
      const turn = (): void => {
        for (let i = 0; i < 16; i++) if (!session.push('flood', body)) return;
        setImmediate(turn);
      };
      setImmediate(turn);
      return 'flooding';
    },
  },
};

interface Gateway {
  readonly runtime: ZLinkRuntime;
  readonly listener: WebSocketSessionListener;
  readonly port: number;
  readonly url: string;
  /** Each client the test opened said Hello with its TCP address as the listener saw it. */
  readonly addresses: (RemoteAddress | undefined)[];
}

/**
 * A gateway runtime (its own `net` listener `game` beside) and a WebSocket listener on the same
 * session host: the runtime's handlers and hooks serve the WebSocket's sessions. The handler passed
 * to the listener is the host itself, behind a hop that notes each link's address.
 */
async function gateway(
  limits: Record<string, unknown> = {},
  entry: Partial<NormalizedSessionListen> = {},
): Promise<Gateway> {
  const runtime = cleanup.add(
    await startGateway(gatewayOptions({ maxFrameBytes: MAX_FRAME, ...limits }), {
      handlers: HANDLERS,
    }),
  );
  const host = runtime.sessions.host;
  const addresses: (RemoteAddress | undefined)[] = [];
  const handler: SessionLinkHandler = {
    opened: (link, token) => {
      addresses.push(link.remoteAddress);
      host.opened(link, token);
    },
    request: (link, correlation, packet, payload) => host.request(link, correlation, packet, payload),
    send: (link, packet, payload) => host.send(link, packet, payload),
    closed: (link, reason, detail) => host.closed(link, reason, detail),
  };
  const listener = new WebSocketSessionListener(
    { options: runtime.options.sessions.get('game')!, handler, events: runtime.events, count: { open: 0 } },
    // The gateway's own tcp entry, read as a websocket one on another port.
    {
      ...runtime.options.sessions.get('game')!.listen[0]!,
      listen: { port: 0, bindHost: '127.0.0.1', advertiseHost: undefined },
      kind: 'websocket',
      path: '/game',
      ...entry,
    },
  );
  await listener.bind();
  cleanup.add(listener);
  const url = listener.localEndpoint as string;
  return { runtime, listener, port: Number(new URL(url).port), url, addresses };
}

function peer(url: string, options?: ConstructorParameters<typeof WsPeer>[1]): WsPeer {
  return cleanup.add(new WsPeer(url, options));
}

/** A good client is served: Hello, Welcome, a request answered. */
async function stillServes(g: Gateway): Promise<void> {
  const good = peer(g.url);
  await good.hello();
  expect(await good.request(1, 'echo', 'still here')).toEqual([4, 1, 'still here']);
  good.close();
  await waitFor(() => g.listener.snapshot().sessions === 0, 5000, 'the good client gone');
}

function refusals(g: Gateway): Readonly<Record<UpgradeRefusal, number>> {
  return g.listener.snapshot().upgradeRefusals as Record<UpgradeRefusal, number>;
}

/** Every refusal count 0 but `reason`'s, which is `n`. */
function onlyRefused(reason: UpgradeRefusal, n: number): Record<string, number> {
  const all: Record<string, number> = {
    path: 0,
    origin: 0,
    method: 0,
    handshake: 0,
    headersTooLarge: 0,
    forwardedFor: 0,
    notUpgrade: 0,
    malformed: 0,
    timeout: 0,
    tls: 0,
  };
  all[reason] = n;
  return all;
}

/** Sessions ended for `reason` (refused before their Welcome, or closed after it). */
function ended(g: Gateway, reason: string): number {
  return (
    g.runtime.events.count(`session:refused:${reason}`) + g.runtime.events.count(`session:closed:${reason}`)
  );
}

describe('WebSocket session listener', () => {
  it('welcomes a client over ws, answers its requests, runs its sends and pushes to it', async () => {
    const g = await gateway();
    expect(g.listener.endpoint).toBe(g.url);
    expect(g.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/game$/);
    const c = peer(g.url);
    const sessionId = await c.hello('player-1');
    expect(c.frames[0]).toEqual([2, 1, sessionId, 10000, MAX_FRAME, 64]);
    expect(await c.request(1, 'echo', { a: 1 })).toEqual([4, 1, { a: 1 }]);
    expect((await c.request(2, 'nobody', null)).slice(0, 3)).toEqual([5, 2, 'NoHandler']);
    c.frame([6, 'note', 1]);
    c.frame([6, 'note', 2]);
    await waitFor(() => c.frames.filter((f) => f[0] === 7).length === 2, 5000, 'two pushes');
    expect(c.frames.filter((f) => f[0] === 7)).toEqual([
      [7, 'noted', { got: 1 }],
      [7, 'noted', { got: 2 }],
    ]);
    c.frame([8]);
    await c.next((f) => f[0] === 9);
    expect(g.addresses).toEqual([{ address: '127.0.0.1', port: expect.any(Number), family: 'IPv4' }]);
    expect(g.listener.snapshot()).toMatchObject({
      sessions: 1,
      handshaking: 0,
      upgradeRefusals: onlyRefused('path', 0),
    });
    c.frame([10, 1000, 'bye']);
    expect(await c.waitClosed()).toEqual({ code: 1000, reason: 'normal' });
    await waitFor(() => g.listener.snapshot().sessions === 0, 5000, 'the session ended');
  });

  it('runs examples/sessions/browser-socket.ts: a browser-style Hello, Request, Reply and Close', async () => {
    const g = await gateway();
    expect(await play(g.url, 'from-a-page')).toEqual({ hi: 'there' });
    await waitFor(() => g.runtime.events.count('session:closed:normal') === 1, 5000, 'the session closed');
    expect(g.listener.snapshot().sessions).toBe(0);
  });

  it('takes the path with a query string, and ends a session with its WebSocket close code', async () => {
    const g = await gateway({ maxSessions: 1 });
    const first = peer(`${g.url}?room=7`);
    await first.hello();
    const second = peer(g.url);
    await second.open();
    second.frame([1, 1, 'late']);
    // The session Close frame first (1012 full), then the WebSocket close nearest it (1013).
    expect(await second.next((f) => f[0] === 10)).toEqual([10, 1012, '1 sessions are open']);
    expect(await second.waitClosed()).toEqual({ code: 1013, reason: 'full' });
    await g.listener.drain();
    expect(await first.next((f) => f[0] === 10)).toEqual([10, 1001, 'the server is shutting down']);
    expect(await first.waitClosed()).toEqual({ code: 1001, reason: 'goingAway' });
  });

  it('serves wss with the test CA, and counts a client that fails the TLS handshake', async () => {
    const g = await gateway(
      {},
      {
        tls: {
          key: tlsFile('server.key'),
          cert: tlsFile('server.crt'),
          ca: undefined,
          minVersion: 'TLSv1.2',
        },
      },
    );
    expect(g.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/game$/);
    const c = peer(g.url, { ca: tlsFile('ca.crt') });
    await c.hello();
    expect(await c.request(1, 'echo', 'over TLS')).toEqual([4, 1, 'over TLS']);
    c.frame([6, 'note', 'secure']);
    expect(await c.next((f) => f[0] === 7)).toEqual([7, 'noted', { got: 'secure' }]);
    // A client that does not trust the CA ends the handshake itself; plain bytes are no TLS at all.
    const untrusting = peer(g.url);
    await expect(untrusting.open()).rejects.toThrow();
    expect(await rawHttp(g.port, upgradeRequest())).toMatchObject({ status: undefined, closed: true });
    await waitFor(() => refusals(g).tls === 2, 5000, 'two TLS refusals');
    expect(await c.request(2, 'echo', 'unharmed')).toEqual([4, 2, 'unharmed']);
  });

  describe('refuses a bad upgrade over HTTP, counted, and serves the next client', () => {
    const cases: [string, () => string, number, UpgradeRefusal][] = [
      ['a wrong path', () => upgradeRequest('/admin'), 404, 'path'],
      ['a method other than GET', () => upgradeRequest().replace(/^GET/, 'POST'), 405, 'method'],
      [
        'a bad Sec-WebSocket-Key',
        () => upgradeRequest('/game', { 'Sec-WebSocket-Key': 'bad' }),
        400,
        'handshake',
      ],
      [
        'no Sec-WebSocket-Key',
        () => upgradeRequest('/game', { 'Sec-WebSocket-Key': undefined }),
        400,
        'handshake',
      ],
      [
        'another WebSocket version',
        () => upgradeRequest('/game', { 'Sec-WebSocket-Version': '12' }),
        400,
        'handshake',
      ],
      [
        'an Upgrade that is not websocket',
        () => upgradeRequest('/game', { Upgrade: 'h2c' }),
        400,
        'handshake',
      ],
      ['a plain HTTP request', () => 'GET /game HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 426, 'notUpgrade'],
      [
        '1 MB of headers',
        () => upgradeRequest('/game', { 'X-Padding': 'a'.repeat(1 << 20) }),
        431,
        'headersTooLarge',
      ],
      ['bytes that are no HTTP', () => 'HELLO THERE\r\n\r\n', 400, 'malformed'],
    ];
    it.each(cases)('%s', async (_what, request, status, reason) => {
      const g = await gateway();
      expect(await rawHttp(g.port, request())).toEqual({ status, closed: true });
      await waitFor(() => refusals(g)[reason] === 1, 5000, `the ${reason} refusal counted`);
      expect(refusals(g)).toEqual(onlyRefused(reason, 1));
      await stillServes(g);
      expect(g.listener.snapshot()).toMatchObject({ sessions: 0, handshaking: 0 });
    });
  });

  it('takes only the Origins listed (any case), and a client that sends none', async () => {
    const g = await gateway({}, { origins: ['https://play.example.com'] });
    expect(await rawHttp(g.port, upgradeRequest('/game', { Origin: 'https://evil.example' }))).toEqual({
      status: 403,
      closed: true,
    });
    const listed = peer(g.url, { origin: 'HTTPS://Play.Example.com' });
    await listed.hello();
    const none = peer(g.url);
    await none.hello();
    const evil = peer(g.url, { origin: 'https://play.example.com.evil.example' });
    await expect(evil.open()).rejects.toThrow();
    expect(evil.refusedWith).toBe(403);
    expect(refusals(g)).toEqual(onlyRefused('origin', 2));
    expect(g.listener.snapshot().sessions).toBe(2);
  });

  it("believes X-Forwarded-For only from a trusted proxy, and refuses a trusted proxy's unreadable one", async () => {
    const trusted = await gateway(
      {},
      { trustedProxies: TrustedProxies.parse('trustedProxies', ['loopback']) },
    );
    const behind = peer(trusted.url, { headers: { 'X-Forwarded-For': '198.51.100.1, 203.0.113.7' } });
    await behind.hello();
    // The right-most hop a trusted proxy added is the client; the header names no port.
    expect(trusted.addresses).toEqual([{ address: '203.0.113.7', port: undefined, family: 'IPv4' }]);
    expect(
      await rawHttp(trusted.port, upgradeRequest('/game', { 'X-Forwarded-For': 'not an address' })),
    ).toEqual({
      status: 400,
      closed: true,
    });
    expect(refusals(trusted)).toEqual(onlyRefused('forwardedFor', 1));
    expect(trusted.listener.snapshot().proxyRefusals).toEqual({ untrusted: 0, oversize: 0, malformed: 1 });

    // From a peer that is not a trusted proxy the header is never read: the peer is the client.
    const untrusted = await gateway(
      {},
      { trustedProxies: TrustedProxies.parse('trustedProxies', ['10.0.0.0/8']) },
    );
    const spoof = peer(untrusted.url, { headers: { 'X-Forwarded-For': '203.0.113.7' } });
    await spoof.hello();
    expect(untrusted.addresses).toEqual([{ address: '127.0.0.1', port: expect.any(Number), family: 'IPv4' }]);
    expect(untrusted.listener.snapshot().proxyRefusals).toEqual({ untrusted: 1, oversize: 0, malformed: 0 });
  });

  it('closes a connection that never upgrades, or trickles its headers, at helloTimeoutMs', async () => {
    const g = await gateway({ helloTimeoutMs: 400 });
    const mute = cleanup.add(new RawWs(g.port, ''));
    const trickle = cleanup.add(new RawWs(g.port, ''));
    const request = upgradeRequest();
    let at = 0;
    const timer = setInterval(() => trickle.write(Buffer.from(request.slice(at, ++at))), 20);
    cleanup.add({ close: () => clearInterval(timer) });
    await waitFor(() => mute.closed && trickle.closed, 5000, 'both closed');
    clearInterval(timer);
    expect(at).toBeLessThan(request.length);
    await waitFor(
      () => refusals(g).timeout === 2,
      5000,
      () => JSON.stringify(refusals(g)),
    );
    expect(refusals(g)).toEqual(onlyRefused('timeout', 2));
    await stillServes(g);
  });

  it('closes an upgraded connection that says no Hello in time: Close frame 1004, then 1008', async () => {
    const g = await gateway({ helloTimeoutMs: 300 });
    const quiet = cleanup.add(new RawWs(g.port));
    expect(await quiet.upgradedWith()).toBe(101);
    expect(await quiet.waitCloseCode()).toBe(1008);
    expect(quiet.sessionFrames()).toEqual([[10, 1004, 'no Hello and Welcome within 300 ms']]);
    expect(ended(g, 'helloTimeout')).toBe(1);
  });

  describe('closes a WebSocket whose client breaks the rules with its code, and only it', () => {
    const hello = binaryFrame([1, 1, 'raw']);
    const cases: [string, () => Buffer, number, string, unknown[][]][] = [
      [
        'a text message',
        () => wsFrame(Opcode.text, Buffer.from('[3,1,"echo",1]')),
        1003,
        'protocolError',
        [[10, 1002, 'a text message: the session wire is binary']],
      ],
      [
        'a message over maxFrameBytes',
        () => wsFrame(Opcode.binary, Buffer.alloc(MAX_FRAME + 1)),
        1009,
        'frameTooLarge',
        [],
      ],
      [
        'a fragmented control frame',
        () => wsFrame(Opcode.ping, Buffer.from('hi'), { fin: false }),
        1002,
        'protocolError',
        [],
      ],
      [
        'an unmasked frame',
        () => wsFrame(Opcode.binary, packr.pack([3, 1, 'echo', 1]), { mask: false }),
        1002,
        'protocolError',
        [],
      ],
      [
        'more fragments than a message may have',
        () =>
          Buffer.concat([
            wsFrame(Opcode.binary, Buffer.from([0x94]), { fin: false }),
            ...Array.from({ length: 300 }, () =>
              wsFrame(Opcode.continuation, Buffer.alloc(1), { fin: false }),
            ),
          ]),
        1008,
        'protocolError',
        [],
      ],
      [
        'an empty binary message',
        () => wsFrame(Opcode.binary, Buffer.alloc(0)),
        1002,
        'protocolError',
        [[10, 1002, 'a frame of length 0']],
      ],
      [
        'a body that is no msgpack array',
        () => wsFrame(Opcode.binary, Buffer.from([0xc1])),
        1002,
        'protocolError',
        [[10, 1002, expect.any(String)]],
      ],
    ];
    it.each(cases)('%s', async (_what, bad, code, reason, sessionFrames) => {
      const g = await gateway();
      const bystander = peer(g.url);
      await bystander.hello();
      const raw = cleanup.add(new RawWs(g.port));
      expect(await raw.upgradedWith()).toBe(101);
      raw.write(hello);
      await waitFor(() => raw.sessionFrames().length === 1, 5000, 'the Welcome');
      raw.write(bad());
      expect(await raw.waitCloseCode()).toBe(code);
      expect(raw.sessionFrames().slice(1)).toEqual(sessionFrames);
      await waitFor(() => ended(g, reason) === 1, 5000, `the session ended ${reason}`);
      expect(await bystander.request(1, 'echo', 'unharmed')).toEqual([4, 1, 'unharmed']);
      expect(refusals(g)).toEqual(onlyRefused('path', 0));
    });
  });

  it('answers a WebSocket ping with its pong, and counts it by its bytes, not as a frame heard', async () => {
    const g = await gateway({ heartbeatMs: 300, idleTimeoutMs: 1000 });
    const raw = cleanup.add(new RawWs(g.port));
    expect(await raw.upgradedWith()).toBe(101);
    raw.write(binaryFrame([1, 1, 'pinger']));
    await waitFor(() => raw.sessionFrames().length === 1, 5000, 'the Welcome');
    const started = Date.now();
    let n = 0;
    const timer = setInterval(() => raw.write(wsFrame(Opcode.ping, Buffer.from(`p${++n}`))), 100);
    try {
      // Pinging all along (a few bytes every 100 ms), it is closed as a silent one is: at the idle
      // timeout, within a sweep (docs/sessions.md#idle-timeout).
      expect(await raw.waitCloseCode(5000)).toBe(1008);
    } finally {
      clearInterval(timer);
    }
    expect(Date.now() - started).toBeLessThan(1000 + 250 + 500);
    expect(raw.sessionFrames().at(-1)).toEqual([10, 1008, 'nothing heard for 1000 ms']);
    const pongs = raw.frames.filter((f) => f.opcode === Opcode.pong);
    expect(pongs[0]?.payload.toString()).toBe('p1');
    expect(pongs.length).toBeGreaterThanOrEqual(5);
  });

  it('drops a client that reads nothing: slowConsumer, reset, held bytes bounded', async () => {
    const maxPendingBytes = 256 * 1024;
    const g = await gateway({ maxPendingBytes, maxFrameBytes: 65536 });
    const bystander = peer(g.url);
    await bystander.hello();
    const raw = cleanup.add(new RawWs(g.port));
    expect(await raw.upgradedWith()).toBe(101);
    raw.write(binaryFrame([1, 1, 'sloth']));
    await waitFor(() => raw.sessionFrames().length === 1, 5000, 'the Welcome');
    raw.socket.pause();
    raw.write(binaryFrame([3, 1, 'flood', { bytes: 8192 }]));
    await waitFor(() => ended(g, 'slowConsumer') === 1, 20000, 'the slow consumer dropped');
    const frame = 8192 + 64;
    expect(g.listener.peakConnectionBytes).toBeGreaterThan(maxPendingBytes);
    expect(g.listener.peakConnectionBytes).toBeLessThanOrEqual(maxPendingBytes + frame);
    raw.socket.resume();
    await waitFor(() => raw.closed, 10000, 'the slow client reset');
    expect(raw.closeCode()).toBeUndefined();
    expect(await bystander.request(1, 'echo', 'unharmed')).toEqual([4, 1, 'unharmed']);
    expect(g.listener.snapshot()).toMatchObject({ sessions: 1, heldBytes: 0 });
  });

  it('negotiates per-message deflate only when it is on', async () => {
    const off = await gateway();
    const plain = peer(off.url, { perMessageDeflate: true });
    await plain.hello();
    expect(plain.ws.extensions).toBe('');
    const on = await gateway({}, { perMessageDeflate: true });
    const deflated = peer(on.url, { perMessageDeflate: true });
    await deflated.hello();
    expect(deflated.ws.extensions).toContain('permessage-deflate');
    const big = 'x'.repeat(800);
    expect(await deflated.request(1, 'echo', big)).toEqual([4, 1, big]);
  });
});
