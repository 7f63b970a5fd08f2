import { afterEach, describe, expect, it } from '@jest/globals';
import {
  SESSION_PROTOCOL_VERSION,
  SessionCloseCode,
  SessionFrameKind,
  frame,
  packr,
} from '../../../lib/core/wire/index.js';
import {
  type SessionClientClose,
  type SessionClientSettings,
  ZLinkSessionClient,
} from '../../../lib/session-client/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { ScriptedServer } from './scripted-server.js';

/**
 * The Node session client's own rules, against a scripted server on a local socket (no listener, no
 * runtime): what it says first, how it matches replies to requests, what it makes of an Error, a
 * Ping and a Close, what a session's end does to requests in flight, and when it reconnects.
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

function client(server: ScriptedServer, settings: SessionClientSettings = {}): ZLinkSessionClient {
  const c = new ZLinkSessionClient({ host: '127.0.0.1', port: server.port, ...settings });
  cleanup.add({ close: () => c.close() });
  return c;
}

/** Connects `c` and answers its Hello with a Welcome. */
async function open(server: ScriptedServer, c: ZLinkSessionClient): Promise<void> {
  const hellos = server.of(SessionFrameKind.Hello).length;
  const welcomed = c.connect();
  await waitFor(() => server.of(SessionFrameKind.Hello).length > hellos, 5000, 'Hello');
  server.welcome();
  await welcomed;
}

function closes(c: ZLinkSessionClient): SessionClientClose[] {
  const seen: SessionClientClose[] = [];
  c.on('close', (close: SessionClientClose) => seen.push(close));
  return seen;
}

describe('ZLinkSessionClient against a scripted server', () => {
  it('opens with a Hello carrying the protocol version and the token (null without one)', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    await open(server, client(server, { token: { user: 'ana' } }));
    await open(server, client(server));
    expect(server.of(SessionFrameKind.Hello)).toEqual([
      [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, { user: 'ana' }],
      [SessionFrameKind.Hello, SESSION_PROTOCOL_VERSION, null],
    ]);
  });

  it("resolves connect() with the server's Welcome and exposes its session id while open", async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server);
    expect(c.isOpen).toBe(false);
    const welcomed = c.connect();
    await waitFor(() => server.of(SessionFrameKind.Hello).length === 1, 5000, 'Hello');
    server.send([SessionFrameKind.Welcome, SESSION_PROTOCOL_VERSION, 'abc', 60_000, 4096, 8]);
    expect(await welcomed).toEqual({
      sessionId: 'abc',
      heartbeatMs: 60_000,
      maxFrameBytes: 4096,
      maxInFlight: 8,
    });
    expect(c.isOpen).toBe(true);
    expect(c.sessionId).toBe('abc');
  });

  it('refuses request() and send() while no session is open, sending nothing', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server);
    await expect(c.request('echo', 1)).rejects.toMatchObject({ code: 'InvalidArgument' });
    expect(c.send('note', 1)).toBe(false);
    await open(server, c);
    expect(server.of(SessionFrameKind.Request)).toEqual([]);
    expect(server.of(SessionFrameKind.Send)).toEqual([]);
  });

  it('numbers requests from 1 and settles each by its own correlation, in whatever order replies come', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server);
    await open(server, c);
    const first = c.request('a', { n: 1 });
    const second = c.request('b');
    expect(c.send('note', 'x')).toBe(true);
    await waitFor(() => server.frames.length === 4, 5000, 'two requests and a send');
    expect(server.of(SessionFrameKind.Request)).toEqual([
      [SessionFrameKind.Request, 1, 'a', { n: 1 }],
      // A request without a message carries nil, as a send does.
      [SessionFrameKind.Request, 2, 'b', null],
    ]);
    expect(server.of(SessionFrameKind.Send)).toEqual([[SessionFrameKind.Send, 'note', 'x']]);
    server.send([SessionFrameKind.Reply, 2, 'second']);
    server.send([SessionFrameKind.Reply, 1, 'first']);
    await expect(first).resolves.toBe('first');
    await expect(second).resolves.toBe('second');
  });

  it("turns an Error frame into RemoteError with the server's code, message and details", async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server);
    await open(server, c);
    const plain = c.request('missing');
    const detailed = c.request('bad');
    await waitFor(() => server.of(SessionFrameKind.Request).length === 2, 5000, 'requests');
    server.send([SessionFrameKind.Error, 1, 'NoHandler', 'no handler for missing']);
    server.send([SessionFrameKind.Error, 2, 'HandlerError', 'invalid', { field: 'name' }]);
    const noHandler = await plain.catch((e: unknown) => e);
    expect(noHandler).toMatchObject({
      code: 'RemoteError',
      remote: { code: 'NoHandler', message: 'no handler for missing' },
    });
    expect((noHandler as { remote: object }).remote).not.toHaveProperty('details');
    await expect(detailed).rejects.toMatchObject({
      code: 'RemoteError',
      remote: { code: 'HandlerError', message: 'invalid', details: { field: 'name' } },
      details: { field: 'name' },
    });
  });

  it('answers a Ping with a Pong and hands a Push to its listeners', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server);
    const pushes: unknown[][] = [];
    c.on('push', (packet: string, msg: unknown) => pushes.push([packet, msg]));
    await open(server, c);
    server.send([SessionFrameKind.Ping]);
    server.send([SessionFrameKind.Push, 'score', { points: 3 }]);
    await waitFor(
      () => server.of(SessionFrameKind.Pong).length === 1 && pushes.length === 1,
      5000,
      'Pong, push',
    );
    expect(pushes).toEqual([['score', { points: 3 }]]);
  });

  it('times a request out after its deadline and ignores the reply that comes later', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server, { requestTimeoutMs: 10_000 });
    await open(server, c);
    await expect(c.request('slow', null, { timeoutMs: 30 })).rejects.toMatchObject({ code: 'Timeout' });
    server.send([SessionFrameKind.Reply, 1, 'late']);
    // The session goes on: the next request has the next correlation and is answered.
    const next = c.request('next');
    await waitFor(() => server.of(SessionFrameKind.Request).length === 2, 5000, 'second request');
    server.send([SessionFrameKind.Reply, 2, 'ok']);
    await expect(next).resolves.toBe('ok');
  });

  it("reports the server's Close by its reason, and a code it does not know as 'lost'", async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const known = client(server);
    const knownCloses = closes(known);
    await open(server, known);
    server.send([SessionFrameKind.Close, SessionCloseCode.idleTimeout, 'idle']);
    await waitFor(() => knownCloses.length === 1, 5000, 'close');
    expect(knownCloses).toEqual([
      { reason: 'idleTimeout', code: SessionCloseCode.idleTimeout, detail: 'idle', by: 'server' },
    ]);
    expect(known.isOpen).toBe(false);

    const unknown = client(server);
    const unknownCloses = closes(unknown);
    await open(server, unknown);
    server.send([SessionFrameKind.Close, 4999, 'from a later version']);
    await waitFor(() => unknownCloses.length === 1, 5000, 'close');
    expect(unknownCloses).toEqual([
      { reason: 'lost', code: 4999, detail: 'from a later version', by: 'server' },
    ]);
  });

  it('fails every request in flight with Unavailable when the session ends', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server);
    await open(server, c);
    const pending = [c.request('a'), c.request('b')];
    await waitFor(() => server.of(SessionFrameKind.Request).length === 2, 5000, 'requests');
    server.latest().destroy();
    for (const request of pending)
      await expect(request).rejects.toMatchObject({
        code: 'Unavailable',
        message: expect.stringContaining('lost'),
      });
  });

  it('rejects connect() with Unavailable, the Close in details, when the server refuses the Hello', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server, { reconnect: { initialMs: 10 } });
    const reconnecting: number[] = [];
    c.on('reconnecting', (delay: number) => reconnecting.push(delay));
    const welcomed = c.connect();
    await waitFor(() => server.of(SessionFrameKind.Hello).length === 1, 5000, 'Hello');
    server.send([SessionFrameKind.Close, SessionCloseCode.refused, 'bad token']);
    await expect(welcomed).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'refused', detail: 'bad token', by: 'server' },
    });
    // A refused session would be refused again: no new attempt.
    await new Promise((r) => setTimeout(r, 50));
    expect(reconnecting).toEqual([]);
    expect(server.connections).toHaveLength(1);
  });

  it('ends the session as protocolError, and does not reconnect, when the server breaks the framing', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server, { reconnect: { initialMs: 10 } });
    const seen = closes(c);
    const reconnecting: number[] = [];
    c.on('reconnecting', (delay: number) => reconnecting.push(delay));
    await open(server, c);
    // An empty frame: a length prefix of 0.
    server.latest().write(Buffer.alloc(4));
    await waitFor(() => seen.length === 1, 5000, 'close');
    expect(seen[0]).toMatchObject({ reason: 'protocolError', code: undefined, by: 'connection' });
    await new Promise((r) => setTimeout(r, 50));
    expect(reconnecting).toEqual([]);
  });

  it.each([
    ['malformed msgpack (an array cut short)', Uint8Array.of(0x93, 0x04), 'malformed msgpack'],
    ['a body that is not an array', packr.pack('hello'), 'not a msgpack array'],
  ])(
    'ends the session as protocolError on %s from the server, failing what waits (no crash)',
    async (_, body, detail) => {
      const server = cleanup.add(await ScriptedServer.start());
      const c = client(server);
      const seen = closes(c);
      await open(server, c);
      const pending = c.request('a');
      await waitFor(() => server.of(SessionFrameKind.Request).length === 1, 5000, 'request');
      server.latest().write(frame(body));
      await expect(pending).rejects.toMatchObject({ code: 'Unavailable' });
      expect(seen).toEqual([
        {
          reason: 'protocolError',
          code: undefined,
          detail: expect.stringContaining(detail),
          by: 'connection',
        },
      ]);
    },
  );

  it('after a lost connection, reconnects with a delay between half and all of initialMs, then opens anew', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server, { reconnect: { initialMs: 40, maxMs: 1000 } });
    const reconnecting: number[] = [];
    const opened: string[] = [];
    c.on('reconnecting', (delay: number) => reconnecting.push(delay));
    c.on('open', (w: { sessionId: string }) => opened.push(w.sessionId));
    await open(server, c);
    server.latest().destroy();
    await waitFor(() => server.of(SessionFrameKind.Hello).length === 2, 5000, 'a second Hello');
    server.welcome('session-2');
    await waitFor(() => opened.length === 2, 5000, 'second open');
    expect(opened).toEqual(['session-1', 'session-2']);
    expect(reconnecting).toHaveLength(1);
    expect(reconnecting[0]).toBeGreaterThanOrEqual(20);
    expect(reconnecting[0]).toBeLessThanOrEqual(40);
  });

  it('doubles the reconnect delay per failed attempt, up to maxMs, and starts over once welcomed', async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server, { reconnect: { initialMs: 8, maxMs: 20 } });
    const reconnecting: number[] = [];
    c.on('reconnecting', (delay: number) => reconnecting.push(delay));
    await open(server, c);
    // Three attempts that end before a Welcome: bases 8, 16, then 20 (the cap).
    for (let attempt = 1; attempt <= 3; attempt++) {
      server.latest().destroy();
      await waitFor(
        () => server.of(SessionFrameKind.Hello).length === attempt + 1,
        5000,
        `Hello ${attempt + 1}`,
      );
    }
    server.welcome('again');
    await waitFor(() => c.isOpen, 5000, 'open again');
    server.latest().destroy();
    await waitFor(() => reconnecting.length === 4, 5000, 'fourth reconnecting');
    const bounds = [8, 16, 20, 8];
    reconnecting.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(Math.round((bounds[i] as number) / 2));
      expect(delay).toBeLessThanOrEqual(bounds[i] as number);
    });
  });

  it("does not reconnect after its own close(), and reports that close as the client's", async () => {
    const server = cleanup.add(await ScriptedServer.start());
    const c = client(server, { reconnect: { initialMs: 10 } });
    const seen = closes(c);
    const reconnecting: number[] = [];
    c.on('reconnecting', (delay: number) => reconnecting.push(delay));
    await open(server, c);
    await c.close('normal', 'bye');
    await waitFor(() => server.of(SessionFrameKind.Close).length === 1, 5000, 'Close');
    expect(server.of(SessionFrameKind.Close)).toEqual([
      [SessionFrameKind.Close, SessionCloseCode.normal, 'bye'],
    ]);
    expect(seen).toEqual([{ reason: 'normal', code: SessionCloseCode.normal, detail: 'bye', by: 'client' }]);
    await new Promise((r) => setTimeout(r, 50));
    expect(reconnecting).toEqual([]);
    expect(server.connections).toHaveLength(1);
  });
});
