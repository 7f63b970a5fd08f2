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
  type SessionResumeState,
  ZLinkSessionClient,
} from '../../../lib/session-client/index.js';
import { Cleanup, waitFor } from '../../helpers/index.js';
import { ScriptedServer } from './scripted-server.js';

/**
 * The Node client's resume after a drop (docs/sessions.md#resume-in-the-client) against a scripted
 * server on a local socket: what its Hellos say, its Acks, what it sends again after a resume and
 * what it does not, its events, and how a resume ends (refused, expired, its own close).
 */

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const { Hello, Request, Reply, Send, Push, Ping, Pong, Close, Ack } = SessionFrameKind;
const V = SESSION_PROTOCOL_VERSION;
const TERMS = { token: 'tok-1', graceMs: 30000, received: 0 };

async function server(): Promise<ScriptedServer> {
  return cleanup.add(await ScriptedServer.start());
}

function client(s: ScriptedServer, settings: SessionClientSettings = {}): ZLinkSessionClient {
  const c = new ZLinkSessionClient({
    host: '127.0.0.1',
    port: s.port,
    resume: true,
    reconnect: { initialMs: 10, maxMs: 20 },
    ...settings,
  });
  cleanup.add({ close: () => c.close() });
  return c;
}

/** Every event of `c`, in order, as [name, first argument]. */
function record(c: ZLinkSessionClient): [string, unknown][] {
  const seen: [string, unknown][] = [];
  for (const name of ['open', 'close', 'reconnecting', 'push', 'dropped', 'resumed'])
    c.on(name, (first: unknown) => seen.push([name, first]));
  return seen;
}

const names = (seen: [string, unknown][]) => seen.map(([n]) => n).filter((n) => n !== 'reconnecting');

/** Waits for the `n`th Hello (from 1) and answers it with a Welcome. */
async function welcomeHello(
  s: ScriptedServer,
  n: number,
  terms: { token: string; graceMs: number; received: number } | null = TERMS,
  sessionId = 'session-1',
): Promise<unknown[]> {
  await waitFor(() => s.of(Hello).length >= n, 5000, `Hello ${n}`);
  s.welcome(sessionId, terms ?? undefined);
  return s.of(Hello)[n - 1] as unknown[];
}

async function resumable(
  s: ScriptedServer,
  settings: SessionClientSettings = {},
): Promise<ZLinkSessionClient> {
  const c = client(s, settings);
  const welcomed = c.connect();
  await welcomeHello(s, 1);
  await welcomed;
  return c;
}

describe('the client with resume against a scripted server', () => {
  it("asks for resume in its Hello ([]) and reads the Welcome's terms", async () => {
    const s = await server();
    const c = client(s, { token: 'ticket' });
    const welcomed = c.connect();
    expect(await welcomeHello(s, 1)).toEqual([Hello, V, 'ticket', []]);
    expect(await welcomed).toEqual({
      sessionId: 'session-1',
      heartbeatMs: 60000,
      maxFrameBytes: 1 << 20,
      maxInFlight: 64,
      resumeGraceMs: 30000,
    });
    expect(c.resumeState).toEqual({
      sessionId: 'session-1',
      token: 'tok-1',
      received: 0,
      nextCorrelation: 1,
      until: expect.any(Number),
    });
  });

  it('acknowledges once per read the Replies, Errors and Pushes received, counting over the session', async () => {
    const s = await server();
    const c = await resumable(s);
    const answer = c.request('a');
    await waitFor(() => s.of(Request).length === 1, 5000, 'request');
    // One write, three frames: one read, one Ack of 3.
    const three = Buffer.concat(
      [
        [Push, 'p', 1],
        [Push, 'p', 2],
        [Reply, 1, 'ok'],
      ].map((f) => frameOf(f)),
    );
    s.latest().write(three);
    await expect(answer).resolves.toBe('ok');
    await waitFor(() => s.of(Ack).length === 1, 5000, 'Ack');
    s.send([Push, 'p', 3]);
    await waitFor(() => s.of(Ack).length === 2, 5000, 'second Ack');
    expect(s.of(Ack)).toEqual([
      [Ack, 3],
      [Ack, 4],
    ]);
    expect(c.resumeState?.received).toBe(4);
  });

  it('sends no Ack, and ends at a drop, when the server offers no resume', async () => {
    const s = await server();
    const c = client(s);
    const seen = record(c);
    const welcomed = c.connect();
    await welcomeHello(s, 1, null);
    expect((await welcomed).resumeGraceMs).toBeUndefined();
    s.send([Push, 'p', 1]);
    await waitFor(() => seen.some(([n]) => n === 'push'), 5000, 'push');
    expect(c.resumeState).toBeUndefined();
    s.latest().destroy();
    await waitFor(() => seen.some(([n]) => n === 'close'), 5000, 'close');
    expect(s.of(Ack)).toEqual([]);
    expect(seen.find(([n]) => n === 'close')?.[1]).toMatchObject({ reason: 'lost', by: 'connection' });
  });

  it('keeps its requests through a drop, resumes the same session, and sends again only what the server never got', async () => {
    const s = await server();
    const c = await resumable(s);
    const seen = record(c);
    const first = c.request('a', 1);
    const second = c.request('b', 2);
    expect(c.send('note', 3)).toBe(true);
    await waitFor(() => s.frames.length >= 4, 5000, 'two requests and a send');
    s.send([Push, 'before', 0]);
    await waitFor(() => s.of(Ack).length === 1, 5000, 'Ack');
    s.latest().destroy();
    await waitFor(() => seen.some(([n]) => n === 'dropped'), 5000, 'dropped');
    expect(seen.find(([n]) => n === 'dropped')?.[1]).toEqual({
      detail: expect.stringContaining('closed'),
      graceMs: 30000,
    });
    // Away: the session id stays, new work is refused, what was in flight waits.
    expect(c.isOpen).toBe(false);
    expect(c.sessionId).toBe('session-1');
    await expect(c.request('c')).rejects.toMatchObject({ code: 'Unavailable' });
    expect(c.send('later')).toBe(false);

    // The server took request 1 only: request 2 and the send go again, in order, same correlation.
    const hello = await welcomeHello(s, 2, { token: 'tok-2', graceMs: 30000, received: 1 });
    expect(hello).toEqual([Hello, V, null, ['session-1', 'tok-1', 1]]);
    await waitFor(() => s.frames.filter((f) => f[0] !== Ping).length >= 8, 5000, 'the frames sent again');
    const afterResume = s.frames.slice(s.frames.indexOf(hello) + 1).filter((f) => f[0] !== Ping);
    expect(afterResume).toEqual([
      [Request, 2, 'b', 2],
      [Send, 'note', 3],
    ]);
    s.send([Reply, 1, 'one']);
    s.send([Reply, 2, 'two']);
    await expect(first).resolves.toBe('one');
    await expect(second).resolves.toBe('two');
    expect(names(seen)).toEqual(['push', 'dropped', 'resumed']);
    expect(seen.find(([n]) => n === 'resumed')?.[1]).toMatchObject({ sessionId: 'session-1' });
    expect(c.resumeState).toMatchObject({ token: 'tok-2', received: 3 });
    // The next resume says the count on from the first session's: 1 push, 2 replies.
    s.latest().destroy();
    expect(await welcomeHello(s, 3, { token: 'tok-3', graceMs: 30000, received: 3 })).toEqual([
      Hello,
      V,
      null,
      ['session-1', 'tok-2', 3],
    ]);
    await waitFor(() => names(seen).length === 5, 5000, 'resumed again');
    expect(names(seen)).toEqual(['push', 'dropped', 'resumed', 'dropped', 'resumed']);
  });

  it('does not send again a request that timed out while away; its late answer is counted and dropped', async () => {
    const s = await server();
    const c = await resumable(s);
    const slow = c.request('slow', null, { timeoutMs: 50 });
    await waitFor(() => s.of(Request).length === 1, 5000, 'request');
    s.refusing = true;
    s.latest().destroy();
    await expect(slow).rejects.toMatchObject({ code: 'Timeout' });
    s.refusing = false;
    await welcomeHello(s, 2, { token: 'tok-2', graceMs: 30000, received: 0 });
    await waitFor(() => c.isOpen, 5000, 'resumed');
    const next = c.request('next');
    await waitFor(() => s.of(Request).length === 2, 5000, 'the next request');
    expect(s.of(Request)[1]).toEqual([Request, 2, 'next', null]);
    s.send([Reply, 1, 'late']);
    s.send([Reply, 2, 'ok']);
    await expect(next).resolves.toBe('ok');
    await waitFor(() => c.resumeState?.received === 2, 5000, 'both counted');
  });

  it('ends the session resumeRefused on a 1014, failing what waits; reconnect then opens a new session', async () => {
    const s = await server();
    const c = await resumable(s);
    const seen = record(c);
    const pending = c.request('a');
    await waitFor(() => s.of(Request).length === 1, 5000, 'request');
    s.latest().destroy();
    await waitFor(() => s.of(Hello).length === 2, 5000, 'the resume Hello');
    s.send([Close, SessionCloseCode.resumeRefused, 'no session to resume with this token']);
    await expect(pending).rejects.toMatchObject({ code: 'Unavailable' });
    expect(await welcomeHello(s, 3, TERMS, 'session-2')).toEqual([Hello, V, null, []]);
    await waitFor(() => names(seen).includes('open'), 5000, 'open');
    expect(names(seen)).toEqual(['dropped', 'close', 'open']);
    expect(seen.find(([n]) => n === 'close')?.[1]).toEqual({
      reason: 'resumeRefused',
      code: 1014,
      detail: 'no session to resume with this token',
      by: 'server',
    });
    expect(c.sessionId).toBe('session-2');
  });

  it('tries at once, then ends the session resumeExpired when no resume succeeds within the grace', async () => {
    const s = await server();
    const c = client(s, { reconnect: false });
    const seen = record(c);
    const welcomed = c.connect();
    await welcomeHello(s, 1, { token: 'tok', graceMs: 300, received: 0 });
    await welcomed;
    const pending = c.request('a');
    s.refusing = true;
    s.latest().destroy();
    await expect(pending).rejects.toMatchObject({
      code: 'Unavailable',
      message: expect.stringContaining('resumeExpired'),
    });
    const closes = seen.filter(([n]) => n === 'close').map(([, v]) => v as SessionClientClose);
    expect(closes).toEqual([
      { reason: 'resumeExpired', code: undefined, detail: 'not resumed within 300 ms', by: 'connection' },
    ]);
    // It tried (reconnecting before each attempt: the first at once) and stopped at the grace: no
    // attempt after the close.
    const delays = seen.filter(([n]) => n === 'reconnecting').map(([, delay]) => delay);
    expect(delays.length).toBeGreaterThan(1);
    expect(delays[0]).toBe(0);
    const attempts = seen.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(seen).toHaveLength(attempts);
    expect(c.resumeState).toBeUndefined();
  });

  it('treats 3 heartbeats of silence as a drop, not an end', async () => {
    const s = await server();
    const c = client(s);
    const seen = record(c);
    const welcomed = c.connect();
    await waitFor(() => s.of(Hello).length === 1, 5000, 'Hello');
    s.welcome('session-1', TERMS, 50);
    await welcomed;
    // The scripted server never answers the Pings.
    await waitFor(() => names(seen).includes('dropped'), 5000, 'dropped');
    expect(seen.find(([n]) => n === 'dropped')?.[1]).toMatchObject({ detail: 'nothing heard for 150 ms' });
    expect(names(seen)).not.toContain('close');
  });

  it('writes a Ping every 16 KiB of sends, and a Pong lets go of them: a resume then sends nothing again', async () => {
    const s = await server();
    const c = await resumable(s);
    for (let i = 0; i < 300; i++) c.send('move', 'x'.repeat(100));
    await waitFor(() => s.of(Send).length === 300, 5000, 'the sends');
    const pings = s.of(Ping).length;
    expect(pings).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < pings; i++) s.send([Pong]);
    await new Promise((r) => setTimeout(r, 50));
    s.latest().destroy();
    const received = 300;
    await welcomeHello(s, 2, { token: 'tok-2', graceMs: 30000, received });
    await waitFor(() => c.isOpen, 5000, 'resumed');
    const afterHello = s.frames.slice(s.frames.indexOf(s.of(Hello)[1] as unknown[]) + 1);
    expect(afterHello.filter((f) => f[0] === Send)).toEqual([]);
  });

  it('ends at once with its own close() while away', async () => {
    const s = await server();
    const c = await resumable(s);
    const seen = record(c);
    s.refusing = true;
    s.latest().destroy();
    await waitFor(() => names(seen).includes('dropped'), 5000, 'dropped');
    await c.close('normal', 'quit');
    expect(seen.filter(([n]) => n === 'close').map(([, v]) => v)).toEqual([
      { reason: 'normal', code: 1000, detail: 'quit', by: 'client' },
    ]);
    expect(c.sessionId).toBeUndefined();
  });

  it("resumes from another client's resumeState (a page reload): its Hello, its correlations, `resumed` not `open`", async () => {
    const s = await server();
    const a = await resumable(s);
    const pending = a.request('a');
    await waitFor(() => s.of(Request).length === 1, 5000, 'request');
    s.send([Push, 'p', 1]);
    await waitFor(() => a.resumeState?.received === 1, 5000, 'the push counted');
    const state = a.resumeState as SessionResumeState;
    s.latest().destroy();
    await a.close();
    await expect(pending).rejects.toMatchObject({ code: 'Unavailable' });

    const b = client(s, { resume: false, resumeFrom: state });
    const seen = record(b);
    const welcomed = b.connect();
    expect(await welcomeHello(s, 2, { token: 'tok-2', graceMs: 30000, received: 1 })).toEqual([
      Hello,
      V,
      null,
      ['session-1', 'tok-1', 1],
    ]);
    expect((await welcomed).sessionId).toBe('session-1');
    expect(names(seen)).toEqual(['resumed']);
    // Request 1 may still be running on the server: the next is 2.
    b.request('b').catch(() => undefined);
    await waitFor(() => s.of(Request).length === 2, 5000, 'request');
    expect(s.of(Request)[1]).toEqual([Request, 2, 'b', null]);
  });

  it("rejects connect() with resumeExpired for a resumeState past its 'until', sending nothing", async () => {
    const s = await server();
    const c = client(s, {
      resumeFrom: { sessionId: 's', token: 't', received: 0, nextCorrelation: 1, until: Date.now() - 1 },
    });
    await expect(c.connect()).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'resumeExpired' },
    });
    expect(s.connections).toEqual([]);
  });

  it.each([
    [{ resume: 'yes' }, 'resume'],
    [{ resumeFrom: 'token' }, 'resumeFrom'],
    [
      { resumeFrom: { sessionId: 's', token: 't', received: -1, nextCorrelation: 1, until: 0 } },
      'resumeFrom',
    ],
    [{ resumeFrom: { sessionId: 's', token: 't', received: 0, nextCorrelation: 0, until: 0 } }, 'resumeFrom'],
    [{ resumeFrom: { sessionId: '', token: 't', received: 0, nextCorrelation: 1, until: 0 } }, 'resumeFrom'],
  ])('refuses %j with a Configuration error naming %s', (settings, field) => {
    expect(
      () => new ZLinkSessionClient({ host: '127.0.0.1', port: 7000, ...(settings as SessionClientSettings) }),
    ).toThrow(expect.objectContaining({ code: 'Configuration', details: { field } }));
  });
});

function frameOf(items: unknown[]): Buffer {
  return Buffer.from(frame(packr.pack(items)));
}
