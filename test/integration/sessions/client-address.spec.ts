import { afterEach, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { Packr } from 'msgpackr';
import type { RemoteAddress, ZLinkSession, ZLinkSessionContext } from '../../../lib/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { testTls } from '../../helpers/test-tls.js';
import { proxyV1, proxyV2, proxyV2Local } from '../../helpers/proxy-header.js';
import { RawPeer, frameOf, gatewayOptions, portsOf, startGateway } from './harness.js';

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });

/**
 * The client's address on every session (docs/sessions.md#the-clients-address), over real sockets:
 * without a proxy it is the TCP peer, on `tcp` and `tls` alike, seen by `@OnSessionOpen` (which can
 * refuse an address) and by every handler. Behind a load balancer (`proxyProtocol`) it is the client
 * the PROXY header names, v1 or v2, however its bytes are cut, before a TLS handshake on `tls`; a
 * peer that is no trusted proxy is refused unread, and a header that is garbage, cut short, over the
 * cap or too slow is refused; each counted by reason, none harming a session already open.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const pem = testTls();
const LOOPBACK = { bindHost: '127.0.0.1' };
const TLS_ENTRY = { ...LOOPBACK, kind: 'tls', tls: { key: pem.key, cert: pem.cert } };

const BEHIND_LB = { ...LOOPBACK, proxyProtocol: true, trustedProxies: ['loopback'] };
const CLIENT = { address: '203.0.113.7', port: 51000, family: 'IPv4' };
const CLIENT6 = { address: '2001:db8::7', port: 51001, family: 'IPv6' };

/** A gateway whose `whoami` answers the session's address, and whose open hook notes each one. */
async function gateway(
  listen: unknown,
  refuse?: (address: RemoteAddress) => boolean,
  limits: Record<string, unknown> = {},
) {
  const opened: RemoteAddress[] = [];
  const runtime = cleanup.add(
    await startGateway(gatewayOptions({ listen, ...limits }), {
      handlers: {
        whoami: { fn: (_p: unknown, ctx: unknown) => (ctx as ZLinkSessionContext).session.remoteAddress },
      },
      onOpen: (session: ZLinkSession) => {
        opened.push(session.remoteAddress);
        return refuse?.(session.remoteAddress) !== true;
      },
    }),
  );
  return { runtime, opened, ports: portsOf(runtime) };
}

/** A raw peer, closed after the test; `prefix` goes first (a PROXY header). */
function peer(port: number, tls = false, prefix?: Buffer): RawPeer {
  const p = new RawPeer(port, tls ? { ca: pem.ca } : undefined, prefix);
  cleanup.add({ close: () => p.close() });
  return p;
}

/**
 * A peer (over TLS trusting the test CA with `tls`, after `prefix` if given) that said Hello and,
 * once welcomed, asked `whoami`.
 */
async function ask(port: number, tls = false, prefix?: Buffer): Promise<RawPeer> {
  const p = peer(port, tls, prefix);
  await p.ready();
  return hello(p);
}

/** `p`, connected, says Hello (unless it `said` it already) and, once welcomed, asks `whoami`. */
async function hello(p: RawPeer, said = false): Promise<RawPeer> {
  if (!said) p.frame([1, 1, 'ticket']);
  await waitFor(() => p.frames.length >= 1 || p.closed, 5000, 'the Welcome');
  if (p.frames[0]?.[0] !== 2) return p;
  p.frame([3, 1, 'whoami', null]);
  await waitFor(() => p.frames.length >= 2 || p.closed, 5000, 'the answer');
  return p;
}

describe("the client's address", () => {
  it('is the TCP peer on tcp and tls entries, in the open hook and in handlers', async () => {
    const { opened, ports } = await gateway([LOOPBACK, TLS_ENTRY]);
    for (const [i, port] of ports.entries()) {
      const p = await ask(port, i === 1);
      const self = { address: '127.0.0.1', port: p.socket.localPort, family: 'IPv4' };
      expect(p.frames[1]).toEqual([4, 1, self]);
      expect(opened[i]).toEqual(self);
    }
  });

  it('lets the open hook refuse an address', async () => {
    const { runtime, ports } = await gateway(LOOPBACK, (a) => a.address === '127.0.0.1');
    const p = await ask(ports[0] as number);
    expect(p.closeFrame()).toEqual([10, expect.any(Number), 'refused by the application']);
    expect(runtime.events.counts.get('session:refused:refused')).toBe(1);
  });

  it('is the client a v1 or v2 PROXY header names on tcp, however its bytes are cut', async () => {
    const { opened, ports } = await gateway(BEHIND_LB);
    const port = ports[0] as number;
    // v1 and the Hello in one write: the bytes after the header are the session's.
    const hello1 = frameOf(packr.pack([1, 1, 'ticket']));
    const together = peer(port, false, Buffer.concat([proxyV1(CLIENT), hello1]));
    await together.ready();
    expect((await hello(together, true)).frames[1]).toEqual([4, 1, CLIENT]);
    // v2 for IPv6, a byte a turn.
    const slow = peer(port);
    await slow.ready();
    for (const byte of proxyV2(CLIENT6)) {
      slow.raw(Buffer.from([byte]));
      await new Promise((r) => setTimeout(r, 1));
    }
    expect((await hello(slow)).frames[1]).toEqual([4, 1, CLIENT6]);
    // A LOCAL header (the balancer's own health check) keeps the TCP peer.
    const local = await ask(port, false, proxyV2Local());
    expect(local.frames[1]).toEqual([
      4,
      1,
      { address: '127.0.0.1', port: local.socket.localPort, family: 'IPv4' },
    ]);
    expect(opened).toEqual([
      CLIENT,
      CLIENT6,
      { address: '127.0.0.1', port: local.socket.localPort, family: 'IPv4' },
    ]);
  });

  it('is the client a PROXY header names on tls, the header read before the TLS handshake', async () => {
    const { runtime, ports } = await gateway({ ...BEHIND_LB, kind: 'tls', tls: TLS_ENTRY.tls });
    const port = ports[0] as number;
    // The header and the ClientHello in one segment: the TLS socket takes the bytes after the header.
    for (const header of [proxyV1(CLIENT), proxyV2(CLIENT6)]) {
      const client = await ask(port, true, header);
      expect(client.frames[1]?.[2]).toEqual(header[0] === 0x50 ? CLIENT : CLIENT6);
    }
    // The header alone first, the TLS handshake a while later.
    const tcp = connect({ host: '127.0.0.1', port });
    cleanup.add({ close: () => tcp.destroy() });
    await new Promise((r) => tcp.once('connect', r));
    tcp.write(proxyV2(CLIENT));
    await new Promise((r) => setTimeout(r, 50));
    const later = new RawPeer(port, { ca: pem.ca, socket: tcp });
    await later.ready();
    expect((await hello(later)).frames[1]?.[2]).toEqual(CLIENT);
    expect(runtime.snapshot().sessions?.[0]).toMatchObject({ sessions: 3, tlsErrors: 0 });
  });

  it('refuses a peer that is no trusted proxy before reading a byte, and counts it', async () => {
    const { runtime, ports } = await gateway({
      ...LOOPBACK,
      proxyProtocol: true,
      trustedProxies: ['10.0.0.0/8'],
    });
    const spoof = await ask(ports[0] as number, false, proxyV1(CLIENT));
    await waitFor(() => spoof.closed, 5000, 'the spoofing peer closed');
    expect(spoof.frames).toEqual([]);
    expect(runtime.snapshot().sessions?.[0]?.proxyRefusals).toMatchObject({ untrusted: 1, signature: 0 });
    expect(runtime.events.counts.get('session:refused:protocolError')).toBe(1);
  });

  it('refuses garbage, a cut, an oversized and a slow header, counts each, and harms no session', async () => {
    const { runtime, ports } = await gateway(BEHIND_LB, undefined, { helloTimeoutMs: 800 });
    const port = ports[0] as number;
    const good = await ask(port, false, proxyV1(CLIENT));
    const garbage = peer(port, false, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    const cut = peer(port, false, proxyV2(CLIENT).subarray(0, 20));
    const oversize = peer(port, false, proxyV2(CLIENT, undefined, Buffer.alloc(600)));
    const slow = peer(port, false, Buffer.from('PRO'));
    const silent = peer(port);
    await Promise.all([cut.ready(), silent.ready()]);
    cut.socket.end();
    silent.socket.end();
    await waitFor(
      () => [garbage, cut, oversize, slow, silent].every((p) => p.closed),
      5000,
      'every bad header closed',
    );
    for (const p of [garbage, cut, oversize, slow]) expect(p.frames.filter((f) => f[0] !== 10)).toEqual([]);
    expect(runtime.snapshot().sessions?.[0]?.proxyRefusals).toEqual({
      untrusted: 0,
      signature: 1,
      version: 0,
      command: 0,
      family: 0,
      oversize: 1,
      truncated: 1,
      malformed: 0,
      address: 0,
      timeout: 1,
    });
    // The session open all along still answers, and a new one is welcomed.
    good.frame([3, 2, 'whoami', null]);
    await waitFor(() => good.frames.length >= 3, 5000, 'the open session answered');
    expect(good.frames[2]).toEqual([4, 2, CLIENT]);
    expect((await ask(port, false, proxyV1(CLIENT))).frames[1]).toEqual([4, 1, CLIENT]);
  });
});
