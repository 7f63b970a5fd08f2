import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { RawPeer, gatewayOptions, portsOf, startGateway } from './harness.js';
import { WsPeer } from './ws-peers.js';

/**
 * A `websocket` entry configured through the runtime, beside a `tcp` one of the same name: the browser's
 * sessions and the native client's share the name's handlers and its `maxSessions`, and each entry has
 * its own URL.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const LOOPBACK = { bindHost: '127.0.0.1' };
const handlers = {
  echo: { fn: (p: unknown, ctx: unknown) => ({ echo: p, id: (ctx as ZLinkSessionContext).session.id }) },
};

describe('a websocket listen entry', () => {
  it('serves the name beside a tcp entry, sharing handlers and maxSessions', async () => {
    const runtime = cleanup.add(
      await startGateway(
        gatewayOptions({
          listen: [LOOPBACK, { ...LOOPBACK, kind: 'websocket', path: '/play' }],
          maxSessions: 1,
        }),
        { handlers },
      ),
    );
    const [tcpPort, wsPort] = portsOf(runtime) as [number, number];
    expect(runtime.sessions.endpoints('game')).toEqual([
      `tcp://127.0.0.1:${tcpPort}`,
      `ws://127.0.0.1:${wsPort}/play`,
    ]);
    expect(runtime.snapshot().sessions?.map((s) => s.kind)).toEqual(['tcp', 'websocket']);

    const browser = cleanup.add(new WsPeer(runtime.sessions.localEndpoints('game')[1] as string));
    await browser.hello();
    expect(await browser.request(1, 'echo', 'ws')).toEqual([4, 1, expect.objectContaining({ echo: 'ws' })]);

    // The name's one session is open: a TCP client is refused `full`.
    const refused = new RawPeer(tcpPort);
    cleanup.add({ close: () => refused.close() });
    await waitFor(() => refused.closeFrame() !== undefined, 5000, 'the full close');
    expect(refused.closeFrame()?.[1]).toBe(1012);

    browser.close();
    await waitFor(() => runtime.snapshot().sessions?.[1]?.sessions === 0, 5000, 'the browser gone');
    const native = new RawPeer(tcpPort);
    cleanup.add({ close: () => native.close() });
    await native.ready();
    native.frame([1, 1, 'ticket']);
    native.frame([3, 1, 'echo', 'tcp']);
    await waitFor(() => native.frames.length >= 2, 5000, 'the TCP reply');
    expect(native.frames[1]?.[2]).toMatchObject({ echo: 'tcp' });
  });
});
