import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ZLinkRuntime } from '../../../lib/index.js';
import { gateway, main } from '../../../examples/sessions/behind-a-proxy.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { proxyV1, proxyV2 } from '../../helpers/proxy-header.js';
import { testTls } from '../../helpers/test-tls.js';
import { RawPeer, portsOf } from './harness.js';

/**
 * The load-balancer example of docs/sessions.md runs as written: on its tcp and tls entries a PROXY
 * header names the player, whom the handler sees and the open hook bans.
 */
const cleanup = new Cleanup();
afterEach(async () => {
  jest.restoreAllMocks();
  await cleanup.closeAll();
});

/** A peer on `port` (TLS trusting the test CA with `tls`) after `header`: its Hello, then `whereami`. */
async function whereami(port: number, tls: boolean, header: Buffer): Promise<unknown[][]> {
  const peer = new RawPeer(port, tls ? { ca: testTls().ca } : undefined, header);
  cleanup.add({ close: () => peer.close() });
  await peer.ready();
  peer.frame([1, 1, null]);
  await waitFor(() => peer.frames.length >= 1, 5000, 'the Welcome or the Close');
  if (peer.frames[0]?.[0] !== 2) return peer.frames;
  peer.frame([3, 1, 'whereami', null]);
  await waitFor(() => peer.frames.length >= 2, 5000, 'the reply');
  return peer.frames;
}

describe('examples/sessions/behind-a-proxy.ts', () => {
  it('prints both endpoints, in the order of listen', async () => {
    const lines: string[] = [];
    jest.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    await main();
    expect(lines).toEqual([
      expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/),
      expect.stringMatching(/^tls:\/\/127\.0\.0\.1:\d+$/),
    ]);
  });

  it('sees the player a PROXY header names, on tcp and inside TLS, and bans one', async () => {
    const app = await gateway();
    cleanup.add({ close: () => app.close() });
    const [tcp, tls] = portsOf(app.get(ZLinkRuntime), 'players') as [number, number];
    const player = { address: '198.51.100.4', port: 50123 };
    expect((await whereami(tcp, false, proxyV1(player)))[1]).toEqual([4, 1, '198.51.100.4:50123']);
    const v6 = { address: '2001:db8::4', port: 50124 };
    expect((await whereami(tls, true, proxyV2(v6)))[1]).toEqual([4, 1, '[2001:db8::4]:50124']);
    const banned = await whereami(tcp, false, proxyV2({ address: '203.0.113.66', port: 1 }));
    expect(banned[0]).toEqual([10, expect.any(Number), 'refused by the application']);
  });
});
