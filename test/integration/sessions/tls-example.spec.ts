import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ZLinkRuntime } from '../../../lib/index.js';
import { gateway, main } from '../../../examples/sessions/tls-gateway.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { testTls } from '../../helpers/test-tls.js';
import { RawPeer, portsOf } from './harness.js';

/**
 * The TLS example of docs/sessions.md runs as written: one listener on a tcp and a tls entry, the same
 * handler answering a client on either (the TLS client trusting the test CA).
 */
const cleanup = new Cleanup();
afterEach(async () => {
  jest.restoreAllMocks();
  await cleanup.closeAll();
});

describe('examples/sessions/tls-gateway.ts', () => {
  it('prints both endpoints, in the order of listen', async () => {
    const lines: string[] = [];
    jest.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    await main();
    expect(lines).toEqual([
      expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/),
      expect.stringMatching(/^tls:\/\/127\.0\.0\.1:\d+$/),
    ]);
  });

  it('answers hello on the tcp entry and inside TLS on the tls entry', async () => {
    const app = await gateway();
    cleanup.add({ close: () => app.close() });
    const ports = portsOf(app.get(ZLinkRuntime), 'players');
    const trust = [undefined, { ca: testTls().ca }];
    for (const [i, port] of ports.entries()) {
      const peer = new RawPeer(port, trust[i]);
      cleanup.add({ close: () => peer.close() });
      await peer.ready();
      peer.frame([1, 1, null]);
      peer.frame([3, 1, 'hello', 'ada']);
      await waitFor(() => peer.frames.length >= 2, 5000, 'the Welcome and the reply');
      expect(peer.frames[1]).toEqual([4, 1, 'hello, ada']);
    }
  });
});
