/**
 * Resume after a drop between real processes (issue 53 item 4), on a real redis-server: an object
 * server owns the player Actors and the table they sit at; two gateways own the sessions (`long`: a
 * grace of minutes; `short`: a grace of seconds, a 64 KiB `maxPendingBytes` and a short idle
 * timeout). The client is this test, speaking the wire by hand on raw sockets
 * (test/fixtures/e2e/resume-peer.ts, written from docs/sessions-wire.md), and a guesser process.
 *
 * Hooks are read from the processes' own logs: the gateway's `@OnSessionDropped`, `@OnSessionResumed`
 * and `@OnSessionClose`, and the bound Actor's `onSessionDropped`, `onSessionResumed` and
 * `onSessionClosed` on the object server.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { RedisServer } from '../helpers/redis-server.js';
import { Kind, ResumePeer } from '../fixtures/e2e/resume-peer.js';

const LONG_GRACE_MS = 300_000;
const SHORT_GRACE_MS = 4000;
const GUESSES = 100_000;

let redis: RedisServer | undefined;
const apps: ChildApp[] = [];
const peers: ResumePeer[] = [];
let server: ChildApp;
let long: { app: ChildApp; port: number };
let short: { app: ChildApp; port: number };

async function start(name: string, args: Record<string, unknown>): Promise<[ChildApp, ChildMessage]> {
  const app = new ChildApp(name, 'e2e/session-resume.app.js', args);
  apps.push(app);
  return [app, await app.next('ready', 60000)];
}

beforeAll(async () => {
  redis = await RedisServer.start();
  const common = { redisUrl: redis.url, keyPrefix: 'sess-resume' };
  [server] = await start('server-a', { ...common, rid: 'server-a', role: 'server' });
  const [[longApp, longReady], [shortApp, shortReady]] = await Promise.all([
    start('gateway-long', {
      ...common,
      rid: 'gateway-long',
      role: 'gateway',
      listener: { resumeGraceMs: LONG_GRACE_MS },
    }),
    start('gateway-short', {
      ...common,
      rid: 'gateway-short',
      role: 'gateway',
      listener: {
        resumeGraceMs: SHORT_GRACE_MS,
        maxPendingBytes: 65536,
        heartbeatMs: 500,
        idleTimeoutMs: 1500,
      },
    }),
  ]);
  long = { app: longApp, port: longReady.port as number };
  short = { app: shortApp, port: shortReady.port as number };
}, 120000);

afterAll(async () => {
  for (const peer of peers.splice(0)) peer.destroy();
  for (const app of apps.splice(0)) {
    app.kill('SIGKILL');
    await app.exited;
  }
  await redis?.stop();
});

async function connect(port: number): Promise<ResumePeer> {
  const peer = await ResumePeer.connect(port);
  peers.push(peer);
  peer.autoAck = true;
  return peer;
}

/** A new resumable session, logged in as `name` (bound to its player, seated at the table). */
async function player(
  port: number,
  name: string,
): Promise<{ peer: ResumePeer; sessionId: string; token: string }> {
  const peer = await connect(port);
  const welcome = await peer.open('ticket', []);
  peer.request(1, 'login', name);
  expect((await peer.answer(1))[2]).toEqual({ session: welcome.sessionId });
  return { peer, sessionId: welcome.sessionId, token: welcome.token as string };
}

/** Resumes `sessionId` on a new connection, counting on from what `before` received. */
async function resume(port: number, before: ResumePeer, sessionId: string, token: string) {
  const peer = await connect(port);
  peer.received = before.received;
  return { peer, welcome: await peer.open(null, [sessionId, token, before.received]) };
}

const logOf = (app: ChildApp, e: string, session: string, from = 0) =>
  app.waitLog((m) => m.e === e && m.session === session, 20000, from);

async function counts(
  app: ChildApp,
): Promise<{ listener: Record<string, number>; events: Record<string, number> }> {
  const snap = await app.call({ type: 'snapshot' }, 15000);
  const listener = (snap.sessions as Record<string, number>[])[0] as Record<string, number>;
  return { listener, events: snap.counts as Record<string, number> };
}

/** Replies, Errors and Pushes as `reply c` / `error c` / `push packet`, after the Welcome. */
const shown = (frames: readonly unknown[][]) =>
  frames
    .filter((f) => f[0] === Kind.Reply || f[0] === Kind.Error || f[0] === Kind.Push)
    .map((f) =>
      f[0] === Kind.Push
        ? `push ${String(f[1])} ${JSON.stringify(f[2])}`
        : `${f[0] === Kind.Reply ? 'reply' : 'error'} ${String(f[1])} ${JSON.stringify(f[2])}`,
    );

describe('resume after a drop, between processes', () => {
  it('the connection drops (no Close) with a request in flight; the room and the gateway push and the request is answered while away; the resume gets all of it, in order, on the same session and bindings', async () => {
    const fromServer = server.logs.length;
    const fromGateway = long.app.logs.length;
    const { peer: a, sessionId, token } = await player(long.port, 'ada');
    // A request the Actor holds until released, then one the gateway answers: the server took both.
    a.request(2, 'slow', { n: 1 });
    a.request(3, 'echo', 'sync');
    await a.answer(3);
    const before = shown(a.frames);
    a.destroy();

    const dropped = await logOf(long.app, 'dropped', sessionId, fromGateway);
    expect(dropped).toMatchObject({ reason: 'lost', open: true, connected: false });
    // While away: a room push, a push of the gateway's own, and the Actor's push and answer.
    expect((await long.app.call({ type: 'shout', n: 1 })).sent).toBe(1);
    expect((await long.app.call({ type: 'push', session: sessionId, n: 2 })).sent).toBe(true);
    await server.call({ type: 'release', n: 1 });
    await server.waitLog((m) => m.e === 'slowAnswered' && m.n === 1, 20000, fromServer);
    await logOf(server, 'actorDropped', sessionId, fromServer);

    const { peer: b, welcome } = await resume(long.port, a, sessionId, token);
    expect(welcome.sessionId).toBe(sessionId);
    expect(welcome.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(welcome.token).not.toBe(token);
    expect(welcome.received).toBe(3); // login, slow and echo: nothing to send again
    await b.answer(2);
    const held = shown(b.frames);
    expect(held).toEqual(['push news {"n":1}', 'push gw {"n":2}', 'push slowed {"n":1}', 'reply 2 {"n":1}']);
    // Nothing twice: what came before the drop and what came after are the session's output once.
    expect(before).toEqual(['reply 1 {"session":"' + sessionId + '"}', 'reply 3 "sync"']);

    // The same session, still bound: the Actor sees it, and answers on the new connection.
    b.request(4, 'step', 7);
    expect((await b.answer(4))[2]).toEqual({ n: 7, session: sessionId });
    const resumed = await logOf(long.app, 'resumed', sessionId, fromGateway);
    expect(resumed).toMatchObject({ name: 'ada', actors: ['ada'] });
    const actorResumed = await logOf(server, 'actorResumed', sessionId, fromServer);
    const actorDropped = await logOf(server, 'actorDropped', sessionId, fromServer);
    expect(server.logs.indexOf(actorDropped)).toBeLessThan(server.logs.indexOf(actorResumed));
    expect(actorDropped).toMatchObject({ actor: 'ada', reason: 'lost' });

    // A Close ends it for good: the gateway and the Actor hear `normal`.
    b.close();
    expect(await logOf(long.app, 'closed', sessionId, fromGateway)).toMatchObject({ reason: 'normal' });
    expect(await logOf(server, 'actorClosed', sessionId, fromServer)).toMatchObject({ reason: 'normal' });
    const { listener } = await counts(long.app);
    expect(listener).toMatchObject({ detached: 0 });
    expect(listener.resumes).toBeGreaterThanOrEqual(1);
  }, 60000);

  it('a frame the server never got whole is sent again after the resume, and runs once', async () => {
    const fromServer = server.logs.length;
    const { peer: a, sessionId, token } = await player(long.port, 'cid');
    a.request(2, 'step', 1);
    await a.answer(2);
    // Half of a Request frame, then the drop: the server cannot have taken it.
    const body = Buffer.from([0x94, 0x03, 0x03, 0xa4, ...Buffer.from('step'), 0x02]);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    a.writeRaw(Buffer.concat([head, body]).subarray(0, 6));
    a.destroy();
    await logOf(long.app, 'dropped', sessionId);

    const { peer: b, welcome } = await resume(long.port, a, sessionId, token);
    // The server took 2 frames (login, step 1): request 3 never arrived, so the client sends it again.
    expect(welcome.received).toBe(2);
    b.request(3, 'step', 2);
    expect((await b.answer(3))[2]).toEqual({ n: 2, session: sessionId });
    const steps = server.logs.slice(fromServer).filter((m) => m.e === 'stepped' && m.actor === 'cid');
    expect(steps.map((m) => m.n)).toEqual([1, 2]);
    b.close();
  }, 60000);

  it('a client that comes back before its old connection is seen to die takes the session over', async () => {
    const fromGateway = long.app.logs.length;
    const { peer: a, sessionId, token } = await player(long.port, 'eve');
    const { peer: b, welcome } = await resume(long.port, a, sessionId, token);
    expect(welcome.sessionId).toBe(sessionId);
    // The old connection ends with no Close frame: the session is not over for the client.
    expect((await a.end()).close).toBeUndefined();
    expect(await logOf(long.app, 'dropped', sessionId, fromGateway)).toMatchObject({ reason: 'replaced' });
    await logOf(long.app, 'resumed', sessionId, fromGateway);
    b.request(2, 'step', 1);
    expect((await b.answer(2))[2]).toEqual({ n: 1, session: sessionId });
    b.close();
  }, 60000);

  it('a wrong or used token is refused (1014), counted, and leaves the session as it was', async () => {
    const { peer: a, sessionId, token } = await player(long.port, 'dan');
    const start = await counts(long.app);
    const refusedWith = async (t: string): Promise<void> => {
      const p = await connect(long.port);
      await expect(p.open(null, [sessionId, t, a.received])).rejects.toMatchObject({ code: 1014 });
      expect((await p.end()).close?.code).toBe(1014);
    };
    const wrong = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    // While it is connected: refused, and it still answers.
    await refusedWith(wrong);
    a.request(2, 'echo', 'still here');
    expect((await a.answer(2))[2]).toBe('still here');
    a.destroy();
    await logOf(long.app, 'dropped', sessionId);
    // While it is away: refused, and it can still be resumed with its token.
    await refusedWith(wrong);
    const { peer: b, welcome } = await resume(long.port, a, sessionId, token);
    expect(welcome.sessionId).toBe(sessionId);
    b.destroy();
    // The used token resumes nothing any more; the new one does.
    await refusedWith(token);
    const { peer: c } = await resume(long.port, b, sessionId, welcome.token as string);
    c.request(3, 'echo', 'back');
    expect((await c.answer(3))[2]).toBe('back');
    const end = await counts(long.app);
    expect(end.listener.resumesRefused - start.listener.resumesRefused).toBe(3);
    expect(
      (end.events['session:refused:resumeRefused'] ?? 0) -
        (start.events['session:refused:resumeRefused'] ?? 0),
    ).toBe(3);
    c.close();
  }, 60000);

  it(`${GUESSES} guesses of a session's token from another process: none lands, each counted, memory bounded`, async () => {
    const { peer: a, sessionId, token } = await player(long.port, 'gus');
    a.destroy();
    await logOf(long.app, 'dropped', sessionId);
    const start = await counts(long.app);
    const before = await long.app.call({ type: 'snapshot', gc: true });
    const guesser = new ChildApp('guesser', 'e2e/resume-guesser.app.js', {
      port: long.port,
      sessionId,
      tries: GUESSES,
      concurrency: 32,
    });
    apps.push(guesser);
    const result = await guesser.next('guessed', 400000);
    const end = await counts(long.app);
    const after = await long.app.call({ type: 'snapshot', gc: true });
    const mb = (m: ChildMessage, field: string) => (m[field] as number) / 1e6;
    process.stdout.write(
      `resume e2e: ${GUESSES} guesses in ${String(result.ms)} ms; gateway heap after a full GC ` +
        `${mb(before, 'heapUsed').toFixed(1)} -> ${mb(after, 'heapUsed').toFixed(1)} MB, ` +
        `RSS ${mb(before, 'rss').toFixed(1)} -> ${mb(after, 'rss').toFixed(1)} MB\n`,
    );
    expect(result).toMatchObject({ refused: GUESSES, landed: 0, other: 0 });
    expect(end.listener.resumesRefused - start.listener.resumesRefused).toBe(GUESSES);
    expect(end.listener.detached).toBe(start.listener.detached);
    // Nothing of a refused guess stays: the heap after a full collection is where it was (a few MB of
    // slack for what any run allocates meanwhile); RSS keeps what the allocator took at the peak.
    expect(mb(after, 'heapUsed') - mb(before, 'heapUsed')).toBeLessThan(8);
    expect(mb(after, 'rss') - mb(before, 'rss')).toBeLessThan(128);
    // Untouched: its own token still resumes it.
    const { welcome } = await resume(long.port, a, sessionId, token);
    expect(welcome.sessionId).toBe(sessionId);
  }, 420000);

  it('past the grace the session closes resumeExpired (the gateway and the Actor hear it); its token is refused', async () => {
    const fromServer = server.logs.length;
    const { peer: a, sessionId, token } = await player(short.port, 'fay');
    a.destroy();
    expect(await logOf(short.app, 'closed', sessionId)).toMatchObject({ reason: 'resumeExpired' });
    expect(await logOf(server, 'actorClosed', sessionId, fromServer)).toMatchObject({
      actor: 'fay',
      reason: 'resumeExpired',
    });
    await logOf(server, 'actorDropped', sessionId, fromServer);
    const p = await connect(short.port);
    await expect(p.open(null, [sessionId, token, a.received])).rejects.toMatchObject({ code: 1014 });
    const { events } = await counts(short.app);
    expect(events['session:closed:resumeExpired']).toBeGreaterThanOrEqual(1);
  }, 60000);

  it('a silent connection is dropped with no Close frame, and the session resumes', async () => {
    const { peer: a, sessionId, token } = await player(short.port, 'gil');
    // Nothing sent for the idle timeout: the gateway ends the connection, without a Close.
    expect((await a.end(10000)).close).toBeUndefined();
    expect(await logOf(short.app, 'dropped', sessionId)).toMatchObject({ reason: 'idleTimeout' });
    const { peer: b, welcome } = await resume(short.port, a, sessionId, token);
    expect(welcome.sessionId).toBe(sessionId);
    b.request(2, 'echo', 'awake');
    expect((await b.answer(2))[2]).toBe('awake');
    b.close();
  }, 60000);

  it('more than maxPendingBytes held for an away client ends the session slowConsumer', async () => {
    const fromServer = server.logs.length;
    const { peer: a, sessionId, token } = await player(short.port, 'hal');
    a.destroy();
    await logOf(short.app, 'dropped', sessionId);
    // 16 pushes of 8 KiB (128 KiB) for a session that may hold 64 KiB.
    await short.app.call({ type: 'flood', actor: 'hal', bytes: 8192, count: 16 });
    expect(await logOf(short.app, 'closed', sessionId)).toMatchObject({ reason: 'slowConsumer' });
    expect(await logOf(server, 'actorClosed', sessionId, fromServer)).toMatchObject({
      reason: 'slowConsumer',
    });
    const p = await connect(short.port);
    await expect(p.open(null, [sessionId, token, a.received])).rejects.toMatchObject({ code: 1014 });
  }, 60000);
});
