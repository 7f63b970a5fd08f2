import { afterEach, describe, expect, it } from '@jest/globals';
import type { RemoteAddress, ZLinkSession, ZLinkSessionContext } from '../../../lib/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { testTls } from '../../helpers/test-tls.js';
import { RawPeer, gatewayOptions, portsOf, startGateway } from './harness.js';

/**
 * The client's address on every session (docs/sessions.md#the-clients-address), over real sockets:
 * without a proxy it is the TCP peer, on `tcp` and `tls` alike, seen by `@OnSessionOpen` (which can
 * refuse an address) and by every handler.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const pem = testTls();
const LOOPBACK = { bindHost: '127.0.0.1' };
const TLS_ENTRY = { ...LOOPBACK, kind: 'tls', tls: { key: pem.key, cert: pem.cert } };

/** A gateway whose `whoami` answers the session's address, and whose open hook notes each one. */
async function gateway(listen: unknown, refuse?: (address: RemoteAddress) => boolean) {
  const opened: RemoteAddress[] = [];
  const runtime = cleanup.add(
    await startGateway(gatewayOptions({ listen }), {
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

/** A peer (over TLS trusting the test CA with `tls`) that said Hello and, once welcomed, asked `whoami`. */
async function ask(port: number, tls = false): Promise<RawPeer> {
  const p = new RawPeer(port, tls ? { ca: pem.ca } : undefined);
  cleanup.add({ close: () => p.close() });
  await p.ready();
  p.frame([1, 1, 'ticket']);
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
});
