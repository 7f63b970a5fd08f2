import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { SESSION_PROTOCOL_VERSION, SessionFrameKind } from '../../../lib/core/wire/index.js';
import {
  type BrowserSessionClientOptions,
  type SessionClientClose,
  ZLinkSessionClient,
} from '../../../lib/session-client/browser.js';
import { SessionEmitter } from '../../../lib/session-client/emitter.js';
import { Cleanup, freePort, waitFor } from '../../helpers/index.js';
import { ScriptedSessionServer } from '../../helpers/scripted-session-server.js';

/**
 * The browser entry's client in Node, with `ws` standing in for the page's global WebSocket (Chromium
 * runs the same module in test/e2e/browser-client.spec.ts): it takes ws:// and wss:// endpoints only,
 * speaks the same session over one binary message per frame, and has an emitter of its own.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const global = globalThis as { WebSocket?: unknown };
const before = global.WebSocket;
beforeAll(() => {
  global.WebSocket = WebSocket;
});
afterAll(() => {
  global.WebSocket = before;
});

const client = (options: BrowserSessionClientOptions): ZLinkSessionClient =>
  cleanup.add(new ZLinkSessionClient(options));

describe('the browser client', () => {
  it('connects through the global WebSocket: Hello with its token, a reply, a push, its Close', async () => {
    const s = cleanup.add(await ScriptedSessionServer.start('ws'));
    const c = client({ endpoint: s.endpoint, token: { user: 'ana' } });
    const pushes: unknown[][] = [];
    const closes: SessionClientClose[] = [];
    c.on('push', (packet, msg) => pushes.push([packet, msg]));
    c.on('close', (close) => closes.push(close));
    await expect(c.connect()).resolves.toMatchObject({ sessionId: 's-1' });
    expect(c.sessionId).toBe('s-1');
    expect(await c.request('push', 7)).toBe('ok');
    expect(pushes).toEqual([['pushed', 7]]);
    await c.close();
    expect(closes).toEqual([{ reason: 'normal', code: 1000, detail: '', by: 'client' }]);
    await waitFor(() => s.of(SessionFrameKind.Close).length === 1, 5000, 'the Close');
    expect(s.frames[0]).toEqual([SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, { user: 'ana' }]);
  });

  it('rejects connect() with Unavailable when nothing listens, and when there is no WebSocket at all', async () => {
    const port = await freePort();
    await expect(client({ endpoint: `ws://127.0.0.1:${port}/play` }).connect()).rejects.toMatchObject({
      code: 'Unavailable',
    });
    global.WebSocket = undefined;
    try {
      await expect(client({ endpoint: `ws://127.0.0.1:${port}/play` }).connect()).rejects.toMatchObject({
        code: 'Unavailable',
        details: { detail: expect.stringContaining('no WebSocket') },
      });
    } finally {
      global.WebSocket = WebSocket;
    }
  });

  it.each([
    [{ endpoint: 'tcp://127.0.0.1:7000' }, 'endpoint'],
    [{ endpoint: 'tls://127.0.0.1:7000' }, 'endpoint'],
    [{ endpoint: 'http://127.0.0.1:7000/play' }, 'endpoint'],
    [{ host: '127.0.0.1', port: 7000 }, 'endpoint'],
    [{ endpoint: 'wss://127.0.0.1:7000/play', tls: { rejectUnauthorized: false } }, 'tls'],
  ])('refuses %j, naming %s', (options, field) => {
    expect(() => new ZLinkSessionClient(options as unknown as BrowserSessionClientOptions)).toThrow(
      expect.objectContaining({ code: 'Configuration', details: { field } }),
    );
  });
});

describe("the browser client's emitter", () => {
  it('calls listeners in order; once only once; off removes one', () => {
    const e = new SessionEmitter();
    const seen: string[] = [];
    const a = (delay: number) => seen.push(`a${delay}`);
    e.on('reconnecting', a);
    e.once('reconnecting', (delay) => seen.push(`once${delay}`));
    e.on('reconnecting', (delay) => seen.push(`b${delay}`));
    expect(e.emit('reconnecting', 1)).toBe(true);
    e.off('reconnecting', a);
    e.emit('reconnecting', 2);
    expect(seen).toEqual(['a1', 'once1', 'b1', 'b2']);
    expect(e.listenerCount('reconnecting')).toBe(1);
    expect(e.emit('open')).toBe(false);
  });

  it('goes on past a listener that throws, and throws its error again in a microtask', async () => {
    const e = new SessionEmitter();
    const seen: number[] = [];
    e.on('reconnecting', () => {
      throw new Error('listener bug');
    });
    e.on('reconnecting', (delay) => seen.push(delay));
    const thrown = new Promise<unknown>((resolve) => {
      const original = globalThis.queueMicrotask;
      globalThis.queueMicrotask = (task) => {
        globalThis.queueMicrotask = original;
        try {
          task();
        } catch (error) {
          resolve(error);
        }
      };
    });
    e.emit('reconnecting', 5);
    expect(seen).toEqual([5]);
    await expect(thrown).resolves.toMatchObject({ message: 'listener bug' });
  });
});
