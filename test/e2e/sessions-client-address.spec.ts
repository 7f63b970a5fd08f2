/**
 * The client's address between processes (issue 53, docs/sessions.md#the-clients-address): a gateway in
 * its own process whose `whoami` handler logs `session.remoteAddress`, with five listener entries:
 *
 * 0. `tcp`, `proxyProtocol`, trusting `loopback` (a load balancer on this host);
 * 1. `tls`, `proxyProtocol`, trusting `loopback` (TCP passthrough: the header, then the handshake);
 * 2. `tcp`, `proxyProtocol`, trusting only `10.0.0.0/8`: here loopback is a stranger;
 * 3. `tcp` and 4. `tls` without a proxy.
 *
 * A real HAProxy (Debian's, which scripts/setup.sh installs) in front of entries 0 and 1 with
 * `send-proxy` and `send-proxy-v2`: the gateway logs the client's own port, not HAProxy's. A test peer
 * writing v1 and v2 headers by hand: the gateway logs the header's source, and its open hook bans one.
 * Spoofing from an untrusted address, garbage, a header a byte a second, a cut v2 header and one over
 * the cap: each refused and counted, the gateway up, a session open all along unharmed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { Haproxy } from '../helpers/haproxy.js';
import { proxyV1, proxyV2 } from '../helpers/proxy-header.js';
import { testTls } from '../helpers/test-tls.js';
import { waitFor } from '../helpers/index.js';
import { RawPeer } from '../integration/sessions/harness.js';
import { ZLinkSessionClient } from '../../lib/session-client/index.js';

const pem = testTls();
const TLS = { key: pem.key, cert: pem.cert };
const LB = { bindHost: '127.0.0.1', proxyProtocol: true, trustedProxies: ['loopback'] };
const CLIENT = { address: '203.0.113.7', port: 51000, family: 'IPv4' };
const CLIENT6 = { address: '2001:db8::7', port: 51001, family: 'IPv6' };
const BANNED = '203.0.113.66';
const HELLO_TIMEOUT_MS = 3000;

let gateway: ChildApp;
let haproxy: Haproxy | undefined;
let ports: number[] = [];
const peers: RawPeer[] = [];

beforeAll(async () => {
  gateway = new ChildApp('gateway', 'e2e/session-gateway.app.js', {
    ban: BANNED,
    listener: {
      helloTimeoutMs: HELLO_TIMEOUT_MS,
      listen: [
        LB,
        { ...LB, kind: 'tls', tls: TLS },
        { ...LB, trustedProxies: ['10.0.0.0/8'] },
        { bindHost: '127.0.0.1' },
        { bindHost: '127.0.0.1', kind: 'tls', tls: TLS },
      ],
    },
  });
  const ready = await gateway.next('ready', 60000);
  ports = ready.ports as number[];
}, 90000);

afterAll(async () => {
  for (const p of peers.splice(0)) p.close();
  await haproxy?.close();
  gateway.kill('SIGKILL');
  await gateway.exited;
});

/** A raw peer on `port` (over TLS trusting the test CA with `tls`), `prefix` first; closed after the suite. */
function peer(port: number, tls = false, prefix?: Buffer): RawPeer {
  const p = new RawPeer(port, tls ? { ca: pem.ca, servername: 'localhost' } : undefined, prefix);
  peers.push(p);
  return p;
}

/** Hello, then (once welcomed) `whoami`: the frames it got, and the address the gateway logged for it. */
async function whoami(p: RawPeer): Promise<{ frames: unknown[][]; logged: unknown }> {
  await p.ready();
  p.frame([1, 1, 'ticket']);
  await waitFor(() => p.frames.length >= 1 || p.closed, 10000, 'the Welcome');
  if (p.frames[0]?.[0] !== 2) return { frames: p.frames, logged: undefined };
  const before = gateway.logs.length;
  p.frame([3, 1, 'whoami', null]);
  await waitFor(() => p.frames.length >= 2 || p.closed, 10000, 'the answer');
  const log = await gateway.waitLog((m) => m.e === 'whoami', 10000, before);
  return { frames: p.frames, logged: log.remoteAddress };
}

async function snapshot(): Promise<ChildMessage> {
  return gateway.call({ type: 'snapshot' }, 15000);
}

const refusals = async (entry: number): Promise<Record<string, number>> =>
  ((await snapshot()).sessions as { proxyRefusals?: Record<string, number> }[])[entry]?.proxyRefusals ?? {};

describe("the client's address between processes", () => {
  it('behind a real HAProxy (send-proxy and send-proxy-v2, tcp and tls): the client, not HAProxy', async () => {
    haproxy = await Haproxy.start([
      { name: 'v1', target: ports[0] as number, header: 'v1' },
      { name: 'v2', target: ports[0] as number, header: 'v2' },
      { name: 'tls', target: ports[1] as number, header: 'v2' },
    ]);
    for (const [name, tls] of [
      ['v1', false],
      ['v2', false],
      ['tls', true],
    ] as const) {
      const p = peer(haproxy.port(name), tls);
      const { frames, logged } = await whoami(p);
      // HAProxy's own connection to the gateway has a port of its own: this one is the client's.
      const self = { address: '127.0.0.1', port: p.socket.localPort, family: 'IPv4' };
      expect([name, logged]).toEqual([name, self]);
      expect(frames[1]).toEqual([4, 1, self]);
    }
    // The package's own client, through HAProxy, unchanged.
    const client = new ZLinkSessionClient({ host: '127.0.0.1', port: haproxy.port('v2') });
    await client.connect();
    expect(await client.request('whoami', null)).toMatchObject({ address: '127.0.0.1', family: 'IPv4' });
    await client.close();
    expect(await refusals(0)).toMatchObject({ untrusted: 0, signature: 0, truncated: 0, timeout: 0 });
  }, 60000);

  it("a header written by a test peer: the gateway logs the header's source, on tcp and tls", async () => {
    expect((await whoami(peer(ports[0] as number, false, proxyV1(CLIENT)))).logged).toEqual(CLIENT);
    expect((await whoami(peer(ports[0] as number, false, proxyV2(CLIENT6)))).logged).toEqual(CLIENT6);
    expect((await whoami(peer(ports[1] as number, true, proxyV2(CLIENT)))).logged).toEqual(CLIENT);
  }, 30000);

  it('the open hook sees the address and bans one', async () => {
    const banned = await whoami(peer(ports[0] as number, false, proxyV1({ address: BANNED, port: 1 })));
    expect(banned.frames[0]).toEqual([10, expect.any(Number), 'refused by the application']);
  }, 30000);

  it('without a proxy, the TCP peer, on tcp and tls', async () => {
    for (const [port, tls] of [
      [ports[3] as number, false],
      [ports[4] as number, true],
    ] as const) {
      const p = peer(port, tls);
      expect((await whoami(p)).logged).toEqual({
        address: '127.0.0.1',
        port: p.socket.localPort,
        family: 'IPv4',
      });
    }
  }, 30000);

  it('spoofing and hostile headers: each refused and counted, the gateway up, an open session unharmed', async () => {
    const good = peer(ports[0] as number, false, proxyV1(CLIENT));
    expect((await whoami(good)).logged).toEqual(CLIENT);

    // A PROXY header from loopback where only 10.0.0.0/8 is trusted: refused before a byte is read.
    const spoof = peer(ports[2] as number, false, proxyV1({ address: '198.51.100.1', port: 1 }));
    await spoof.ready();
    spoof.frame([1, 1, 'ticket']);
    // Garbage, a cut v2 header, a v2 header over the 536-byte cap, and a header a byte a second.
    const garbage = peer(ports[0] as number, false, Buffer.from('\x16\x03\x01\x02\x00garbage'));
    const cut = peer(ports[0] as number, false, proxyV2(CLIENT).subarray(0, 20));
    const oversize = peer(ports[0] as number, false, proxyV2(CLIENT, undefined, Buffer.alloc(1000, 1)));
    const slow = peer(ports[0] as number);
    await Promise.all([cut.ready(), slow.ready()]);
    cut.socket.end();
    const line = proxyV1(CLIENT);
    let sent = 0;
    const drip = setInterval(() => !slow.closed && slow.raw(line.subarray(sent, ++sent)), 1000);
    try {
      await waitFor(
        () => [spoof, garbage, cut, oversize, slow].every((p) => p.closed),
        HELLO_TIMEOUT_MS + 10000,
        () => `closed: ${[spoof, garbage, cut, oversize, slow].map((p) => p.closed).join(', ')}`,
      );
    } finally {
      clearInterval(drip);
    }
    for (const p of [spoof, garbage, cut, oversize, slow])
      expect(p.frames.filter((f) => f[0] !== 10)).toEqual([]);
    expect(sent).toBeLessThan(line.length);
    expect(await refusals(2)).toMatchObject({ untrusted: 1 });
    expect(await refusals(0)).toMatchObject({ signature: 1, truncated: 1, oversize: 1, timeout: 1 });
    // None of them reached a handler; the gateway is up and the open session answers as before.
    expect(gateway.running).toBe(true);
    expect(
      gateway.logs.filter(
        (m) => m.e === 'whoami' && (m.remoteAddress as { address: string }).address === '198.51.100.1',
      ),
    ).toEqual([]);
    good.frame([3, 2, 'whoami', null]);
    await waitFor(() => good.frames.length >= 3, 10000, 'the open session answered');
    expect(good.frames[2]).toEqual([4, 2, CLIENT]);
    expect(good.closed).toBe(false);
  }, 60000);
});
