import { afterEach, describe, expect, it } from '@jest/globals';
import { ZLinkRuntime } from '../../../lib/index.js';
import type { ZLinkSession, ZLinkSessionContext } from '../../../lib/core/index.js';
import { ZLinkSessionClient } from '../../../lib/session-client/index.js';
import { Cleanup, EventCollector, waitFor } from '../../helpers/index.js';
import { RawPeer, gatewayOptions, portOf, startGateway } from './harness.js';

/**
 * A session listener in one process, reached over real TCP: the Hello and Welcome, requests answered
 * once by `@SessionHandler`s, one-way sends, pushes, the open and close hooks — and every kind of bad
 * input closing only its own connection, with its reason, counted, running no handler.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

function client(runtime: ZLinkRuntime, token?: unknown): ZLinkSessionClient {
  const c = new ZLinkSessionClient({ host: '127.0.0.1', port: portOf(runtime), token });
  cleanup.add({ close: () => c.close() });
  return c;
}

describe('session listener', () => {
  it('welcomes a client, answers its requests once, runs its sends and pushes to it', async () => {
    const sent: unknown[] = [];
    const runtime = cleanup.add(
      await startGateway(gatewayOptions(), {
        handlers: {
          echo: { fn: (p, ctx) => ({ echo: p, id: (ctx as ZLinkSessionContext).session.id }) },
          fail: {
            fn: () => {
              throw new Error('no such room');
            },
          },
          note: {
            kind: 'send',
            fn: (p, ctx) => {
              sent.push(p);
              (ctx as ZLinkSessionContext).session.push('noted', { got: p });
            },
          },
        },
      }),
    );
    const c = client(runtime);
    const pushes: unknown[] = [];
    c.on('push', (packet: string, msg: unknown) => pushes.push([packet, msg]));
    const welcome = await c.connect();
    expect(welcome).toMatchObject({ heartbeatMs: 10000, maxFrameBytes: 65536, maxInFlight: 64 });
    expect(await c.request('echo', { a: 1 })).toEqual({ echo: { a: 1 }, id: welcome.sessionId });
    await expect(c.request('fail')).rejects.toMatchObject({
      code: 'RemoteError',
      remote: { code: 'HandlerError', message: 'no such room' },
    });
    await expect(c.request('nobody')).rejects.toMatchObject({ remote: { code: 'NoHandler' } });
    c.send('note', 1);
    c.send('note', 2);
    await waitFor(() => pushes.length === 2, 5000, 'two pushes');
    expect(sent).toEqual([1, 2]);
    expect(pushes).toEqual([
      ['noted', { got: 1 }],
      ['noted', { got: 2 }],
    ]);
    expect(runtime.snapshot().sessions).toEqual([
      expect.objectContaining({ listener: 'game', sessions: 1, handshaking: 0 }),
    ]);
  });

  it('lets @OnSessionOpen refuse by the token, and @OnSessionClose hear every end once', async () => {
    const closes: [string, string][] = [];
    const runtime = cleanup.add(
      await startGateway(gatewayOptions(), {
        onOpen: (_s, hello) => (hello as { token: unknown }).token === 'good',
        onClose: (s, reason) => closes.push([(s as ZLinkSession).id, reason as string]),
      }),
    );
    const events = cleanup.add(new EventCollector(runtime.events));
    await expect(client(runtime, 'bad').connect()).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'refused' },
    });
    const good = client(runtime, 'good');
    const { sessionId } = await good.connect();
    await good.close();
    await waitFor(() => closes.length === 1, 5000, 'close hook');
    expect(closes).toEqual([[sessionId, 'normal']]);
    expect(runtime.events.count('session:refused:refused')).toBe(1);
    expect(events.of('session').map((e) => e.state)).toEqual(['refused', 'opened', 'closed']);
  });

  it('orders a session: a slow request holds the frames behind it, answered in order', async () => {
    const order: string[] = [];
    const runtime = cleanup.add(
      await startGateway(gatewayOptions(), {
        handlers: {
          slow: {
            fn: async () => {
              await new Promise((r) => setTimeout(r, 50));
              order.push('slow');
              return 'slow';
            },
          },
          fast: {
            fn: () => {
              order.push('fast');
              return 'fast';
            },
          },
        },
      }),
    );
    const c = client(runtime);
    await c.connect();
    const results = await Promise.all([c.request('slow'), c.request('fast')]);
    expect(results).toEqual(['slow', 'fast']);
    expect(order).toEqual(['slow', 'fast']);
  });

  describe('bad input closes only that connection, with its reason', () => {
    const cases: [string, (p: RawPeer) => void, string][] = [
      ['a frame over maxFrameBytes', (p) => p.raw(Buffer.from([0, 1, 0, 1])), 'frameTooLarge'],
      ['an empty frame', (p) => p.raw(Buffer.from([0, 0, 0, 0])), 'protocolError'],
      ['a body that is no array', (p) => p.raw(Buffer.from([0, 0, 0, 1, 0xc1])), 'protocolError'],
      ['an unknown kind first', (p) => p.frame([42]), 'protocolError'],
      ['a request before the Hello', (p) => p.frame([3, 1, 'echo', null]), 'protocolError'],
      ['another protocol version', (p) => p.frame([1, 2]), 'unsupportedVersion'],
      [
        'a second Hello',
        (p) => {
          p.frame([1, 1]);
          p.frame([1, 1]);
        },
        'protocolError',
      ],
      [
        'a correlation used twice',
        (p) => {
          p.frame([1, 1]);
          p.frame([3, 7, 'hold', null]);
          p.frame([3, 7, 'hold', null]);
        },
        'protocolError',
      ],
      [
        'too many requests in flight',
        (p) => {
          p.frame([1, 1]);
          for (let i = 1; i <= 5; i++) p.frame([3, i, 'hold', null]);
        },
        'tooManyInFlight',
      ],
    ];
    it.each(cases)('%s', async (_what, send, reason) => {
      const runtime = cleanup.add(
        await startGateway(gatewayOptions({ maxFrameBytes: 65536, maxInFlight: 4 }), {
          handlers: { hold: { fn: () => new Promise(() => undefined) }, echo: { fn: (p) => p } },
        }),
      );
      const bystander = client(runtime);
      await bystander.connect();
      const peer = cleanup.add(new RawPeer(portOf(runtime)));
      await peer.ready();
      send(peer);
      await waitFor(() => peer.closed, 5000, 'the hostile peer closed');
      const codes = {
        frameTooLarge: 1003,
        protocolError: 1002,
        unsupportedVersion: 1005,
        tooManyInFlight: 1007,
      } as Record<string, number>;
      expect(peer.closeFrame()?.[1]).toBe(codes[reason]);
      const counted =
        runtime.events.count(`session:refused:${reason}`) + runtime.events.count(`session:closed:${reason}`);
      expect(counted).toBe(1);
      expect(await bystander.request('echo', 'still here')).toBe('still here');
    });
  });

  it('closes a connection that never says Hello, and a welcomed one that falls silent', async () => {
    const runtime = cleanup.add(
      await startGateway(gatewayOptions({ helloTimeoutMs: 200, heartbeatMs: 100, idleTimeoutMs: 300 })),
    );
    const mute = cleanup.add(new RawPeer(portOf(runtime)));
    const silent = cleanup.add(new RawPeer(portOf(runtime)));
    await Promise.all([mute.ready(), silent.ready()]);
    silent.frame([1, 1]);
    await waitFor(() => mute.closed && silent.closed, 5000, 'both closed');
    expect(mute.closeFrame()?.[1]).toBe(1004);
    expect(silent.frames[0]?.[0]).toBe(2);
    expect(silent.closeFrame()?.[1]).toBe(1008);
    expect(runtime.events.count('session:refused:helloTimeout')).toBe(1);
    expect(runtime.events.count('session:closed:idleTimeout')).toBe(1);
  });

  it('refuses a listener on a mesh without objects, naming the field', () => {
    expect(() => new ZLinkRuntime({ ...gatewayOptions({ mesh: 'nowhere' }) })).toThrow(
      /sessions\.game\.mesh/,
    );
  });
});
