import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkSessionContext } from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { RawPeer, gatewayOptions, portsOf, startGateway } from './harness.js';

/**
 * A session listener with several `listen` entries: one listener object per entry, each with its URL
 * (`runtime.sessions.endpoints`), all of one name sharing its handlers, hooks and `maxSessions`.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const LOOPBACK = { bindHost: '127.0.0.1' };

async function welcomed(port: number): Promise<RawPeer> {
  const peer = new RawPeer(port);
  cleanup.add({ close: () => peer.close() });
  await peer.ready();
  peer.frame([1, 1, 'ticket']);
  await waitFor(() => peer.frames.length > 0 || peer.closed, 5000, 'the Welcome');
  return peer;
}

describe('a session listener with several entries', () => {
  it('binds each entry, gives each its URL in order, the first as endpoint', async () => {
    const runtime = cleanup.add(
      await startGateway(
        gatewayOptions({ listen: [LOOPBACK, { ...LOOPBACK, advertiseHost: 'play.example' }] }),
      ),
    );
    const [a, b] = portsOf(runtime);
    expect(a).not.toBe(b);
    expect(runtime.sessions.endpoints('game')).toEqual([`tcp://127.0.0.1:${a}`, `tcp://play.example:${b}`]);
    expect(runtime.sessions.endpoint('game')).toBe(`tcp://127.0.0.1:${a}`);
    expect(runtime.sessions.localEndpoints('game')).toEqual([`tcp://127.0.0.1:${a}`, `tcp://127.0.0.1:${b}`]);
    expect(runtime.sessions.endpoints('nowhere')).toEqual([]);
    expect(runtime.snapshot().sessions?.map((s) => [s.listener, s.kind, s.endpoint])).toEqual([
      ['game', 'tcp', `tcp://127.0.0.1:${a}`],
      ['game', 'tcp', `tcp://play.example:${b}`],
    ]);
  });

  it('runs the same handlers for a session on either entry', async () => {
    const runtime = cleanup.add(
      await startGateway(gatewayOptions({ listen: [LOOPBACK, LOOPBACK] }), {
        handlers: { whoami: { fn: (_p, ctx) => (ctx as ZLinkSessionContext).session.id } },
      }),
    );
    const ids: unknown[] = [];
    for (const port of portsOf(runtime)) {
      const peer = await welcomed(port);
      const [, , sessionId] = peer.frames[0] as [number, number, string];
      peer.frame([3, 1, 'whoami', null]);
      await waitFor(() => peer.frames.length > 1, 5000, 'the reply');
      expect(peer.frames[1]).toEqual([4, 1, sessionId]);
      ids.push(sessionId);
    }
    expect(new Set(ids).size).toBe(2);
  });

  it('counts maxSessions over every entry of the name: one more on any entry is closed full', async () => {
    const runtime = cleanup.add(
      await startGateway(gatewayOptions({ listen: [LOOPBACK, LOOPBACK], maxSessions: 2 })),
    );
    const [a, b] = portsOf(runtime) as [number, number];
    const first = await welcomed(a);
    const second = await welcomed(b);
    expect([first.frames[0]?.[0], second.frames[0]?.[0]]).toEqual([2, 2]);
    for (const port of [a, b]) {
      const third = new RawPeer(port);
      cleanup.add({ close: () => third.close() });
      await waitFor(() => third.closeFrame() !== undefined, 5000, 'the full close');
      expect(third.closeFrame()?.[1]).toBe(1012);
    }
    expect(runtime.events.count('session:refused:full')).toBe(2);
    // A session that ends frees its place for either entry.
    first.close();
    await waitFor(
      () => (runtime.snapshot().sessions ?? []).reduce((n, s) => n + s.sessions, 0) === 1,
      5000,
      'the close',
    );
    expect((await welcomed(b)).frames[0]?.[0]).toBe(2);
  });

  it('names the entry whose bind fails', async () => {
    const taken = cleanup.add(await startGateway(gatewayOptions({ listen: LOOPBACK })));
    const [port] = portsOf(taken);
    const runtime = new ZLinkRuntime(gatewayOptions({ listen: [LOOPBACK, { ...LOOPBACK, port }] }));
    cleanup.add(runtime);
    await expect(runtime.start()).rejects.toMatchObject({
      code: 'Configuration',
      details: { field: 'sessions.game.listen[1]' },
    });
  });
});
