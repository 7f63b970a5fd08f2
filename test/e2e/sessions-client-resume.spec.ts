/**
 * The package's session client resuming after a drop (issue 53 items 4 and 6), between real
 * processes on a real redis-server: the object server of test/fixtures/e2e/session-resume.app.ts
 * owns the player Actors and their table, two gateways own the sessions (`long`: a grace of minutes;
 * `short`: 3 s, a 64 KiB `maxPendingBytes`), each listening on tcp and on websocket. The client is
 * `nestjs-zlink/session-client` in this test's process, reaching a gateway through a TCP proxy the
 * test makes fail (test/helpers/tcp-proxy.ts): it stops delivering one way, cuts every connection,
 * refuses new ones for as long as the test says.
 *
 * Resume time is logged: from the cut to the client's `dropped`, and from the proxy taking
 * connections again to the first held push (no timing assertion).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  type SessionClientClose,
  type SessionClientSettings,
  type SessionWelcome,
  ZLinkSessionClient,
} from '../../lib/session-client/index.js';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { RedisServer } from '../helpers/redis-server.js';
import { RecordingProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/index.js';

const LONG_GRACE_MS = 300_000;
const SHORT_GRACE_MS = 3000;
const KINDS = ['tcp', 'ws'] as const;
type Kind = (typeof KINDS)[number];

let redis: RedisServer | undefined;
const apps: ChildApp[] = [];
const proxies: RecordingProxy[] = [];
const clients: ZLinkSessionClient[] = [];
let server: ChildApp;
interface Gateway {
  readonly app: ChildApp;
  /** The tcp entry's port and the websocket entry's, on loopback. */
  readonly ports: Record<Kind, number>;
}
let long: Gateway;
let short: Gateway;

async function start(name: string, args: Record<string, unknown>): Promise<[ChildApp, ChildMessage]> {
  const app = new ChildApp(name, 'e2e/session-resume.app.js', args);
  apps.push(app);
  return [app, await app.next('ready', 60000)];
}

/** Both listener kinds on loopback: tcp, then websocket on `/play`. */
const LISTEN = [
  { kind: 'tcp', bindHost: '127.0.0.1' },
  { kind: 'websocket', bindHost: '127.0.0.1', path: '/play' },
];

function gateway([app, ready]: [ChildApp, ChildMessage]): Gateway {
  const [tcp, ws] = (ready.endpoints as string[]).map((e) => Number(new URL(e).port));
  return { app, ports: { tcp: tcp as number, ws: ws as number } };
}

beforeAll(async () => {
  redis = await RedisServer.start();
  const common = { redisUrl: redis.url, keyPrefix: 'client-resume' };
  [server] = await start('server-a', { ...common, rid: 'server-a', role: 'server' });
  const [l, s] = await Promise.all([
    start('gateway-long', {
      ...common,
      rid: 'gateway-long',
      role: 'gateway',
      listener: { resumeGraceMs: LONG_GRACE_MS, listen: LISTEN },
    }),
    start('gateway-short', {
      ...common,
      rid: 'gateway-short',
      role: 'gateway',
      listener: { resumeGraceMs: SHORT_GRACE_MS, maxPendingBytes: 65536, listen: LISTEN },
    }),
  ]);
  long = gateway(l);
  short = gateway(s);
}, 120000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const proxy of proxies.splice(0)) await proxy.close();
  for (const app of apps.splice(0)) {
    app.kill('SIGKILL');
    await app.exited;
  }
  await redis?.stop();
});

/** A proxy in front of `gw`'s entry of `kind`, and the endpoint a client takes to reach it. */
async function proxied(gw: Gateway, kind: Kind): Promise<{ proxy: RecordingProxy; endpoint: string }> {
  const proxy = await RecordingProxy.start({ target: gw.ports[kind] });
  proxies.push(proxy);
  const endpoint = kind === 'tcp' ? proxy.endpoint : `ws://127.0.0.1:${proxy.port}/play`;
  return { proxy, endpoint };
}

/** Every event of a client, in order, with when it came. */
interface Seen {
  readonly name: string;
  readonly arg: unknown;
  readonly rest: unknown[];
  readonly at: number;
}

function player(
  endpoint: string,
  settings: SessionClientSettings = {},
): {
  client: ZLinkSessionClient;
  seen: Seen[];
} {
  const client = new ZLinkSessionClient({
    endpoint,
    resume: true,
    reconnect: { initialMs: 50, maxMs: 200 },
    ...settings,
  });
  clients.push(client);
  const seen: Seen[] = [];
  for (const name of ['open', 'close', 'dropped', 'resumed', 'push'])
    client.on(name, (arg: unknown, ...rest: unknown[]) => seen.push({ name, arg, rest, at: Date.now() }));
  return { client, seen };
}

const named = (seen: readonly Seen[], name: string) => seen.filter((s) => s.name === name);
const until = (seen: readonly Seen[], name: string, n = 1) =>
  waitFor(() => named(seen, name).length >= n, 20000, `${n} '${name}' events`);

describe.each(KINDS)('the session client over %s, through a network that fails', (kind) => {
  // The object server's `slow` gates are per number, for the process's life: one set per kind.
  const gates = { held: kind === 'tcp' ? 10 : 11, expiring: kind === 'tcp' ? 20 : 21 };
  it('survives a forced drop: requests in flight get one result each, what the server never got runs once after the resume, the pushes made while away arrive in order, on the same session', async () => {
    const name = `ada-${kind}`;
    const { proxy, endpoint } = await proxied(long, kind);
    const fromServer = server.logs.length;
    const fromGateway = long.app.logs.length;
    const { client, seen } = player(endpoint);
    const welcome = await client.connect();
    expect(welcome.resumeGraceMs).toBe(LONG_GRACE_MS);
    expect(await client.request('login', name)).toEqual({ session: welcome.sessionId });

    // Sends, paced as the wire asks (at most maxInFlight waiting): 50, then a request's answer.
    for (let n = 1; n <= 200; n++) {
      client.send('note', n);
      if (n % 50 === 0) expect(await client.request('echo', n)).toBe(n);
    }
    // The network stops delivering to the client: a step the server takes, its answer lost on the
    // way; a request the Actor holds until the test releases it; a send (taken: frames go in order).
    proxy.stall('down');
    const stepTaken = client.request('step', 1);
    const slow = client.request('slow', { n: gates.held });
    client.send('note', 201);
    await server.waitLog((m) => m.e === 'stepped' && m.actor === name && m.n === 1, 20000, fromServer);
    await long.app.waitLog((m) => m.e === 'noted' && m.n === 201, 20000, fromGateway);
    // Then nothing reaches the server: a step and a send it never gets.
    proxy.stall('up');
    const stepLost = client.request('step', 2);
    client.send('note', 202);
    // Cut, and no connection gets through while the session's world goes on without its client.
    proxy.target = undefined;
    const cutAt = Date.now();
    proxy.cut();
    await until(seen, 'dropped');
    const droppedAt = named(seen, 'dropped')[0]?.at as number;
    expect(client.isOpen).toBe(false);
    expect(client.sessionId).toBe(welcome.sessionId);
    await long.app.waitLog((m) => m.e === 'dropped' && m.session === welcome.sessionId, 20000, fromGateway);
    expect((await long.app.call({ type: 'shout', n: 1 })).sent).toBe(1);
    expect((await long.app.call({ type: 'push', session: welcome.sessionId, n: 2 })).sent).toBe(true);
    await server.call({ type: 'release', n: gates.held });
    await server.waitLog((m) => m.e === 'slowAnswered' && m.n === gates.held, 20000, fromServer);

    const pushesBefore = named(seen, 'push').length;
    const reopenAt = Date.now();
    proxy.target = long.ports[kind];
    await until(seen, 'resumed');
    expect(await slow).toEqual({ n: gates.held });
    expect(await stepTaken).toEqual({ n: 1, session: welcome.sessionId });
    expect(await stepLost).toEqual({ n: 2, session: welcome.sessionId });
    await long.app.waitLog((m) => m.e === 'noted' && m.n === 202, 20000, fromGateway);
    await until(seen, 'push', pushesBefore + 5);

    // One session: one open, one drop, one resume, no close; the same id all along.
    expect(seen.filter((s) => s.name !== 'push').map((s) => s.name)).toEqual(['open', 'dropped', 'resumed']);
    expect((named(seen, 'resumed')[0]?.arg as SessionWelcome).sessionId).toBe(welcome.sessionId);
    // What the client had not received, in the order it was made: the held answer's push, the room's
    // push, the gateway's, the released request's; then the step sent again.
    const after = named(seen, 'push')
      .slice(pushesBefore)
      .map((s) => `${String(s.arg)} ${JSON.stringify(s.rest[0])}`);
    expect(after).toEqual([
      'stepped 1',
      'news {"n":1}',
      'gw {"n":2}',
      `slowed {"n":${gates.held}}`,
      'stepped 2',
    ]);
    // Nothing ran twice, nothing was lost: each step once, each send once.
    const steps = server.logs.slice(fromServer).filter((m) => m.e === 'stepped' && m.actor === name);
    expect(steps.map((m) => m.n)).toEqual([1, 2]);
    const notes = long.app.logs
      .slice(fromGateway)
      .filter((m) => m.e === 'noted' && m.session === welcome.sessionId)
      .map((m) => m.n);
    expect(notes).toEqual(Array.from({ length: 202 }, (_, i) => i + 1));
    // It goes on: bound to its Actor still.
    expect(await client.request('step', 3)).toEqual({ n: 3, session: welcome.sessionId });

    const firstHeld = named(seen, 'push')[pushesBefore]?.at as number;
    const resumedAt = named(seen, 'resumed')[0]?.at as number;
    process.stdout.write(
      `client resume over ${kind}: cut -> dropped ${droppedAt - cutAt} ms; proxy open again -> resumed ` +
        `${resumedAt - reopenAt} ms, -> first held push ${firstHeld - reopenAt} ms\n`,
    );
    await client.close();
    expect(
      await long.app.waitLog((m) => m.e === 'closed' && m.session === welcome.sessionId, 20000, fromGateway),
    ).toMatchObject({
      reason: 'normal',
    });
  }, 90000);

  it('resumes at once after a plain drop, and a push made right after the drop arrives (drop -> push timed)', async () => {
    const { proxy, endpoint } = await proxied(long, kind);
    const { client, seen } = player(endpoint, { reconnect: { initialMs: 20, maxMs: 200 } });
    const welcome = await client.connect();
    expect(await client.request('login', `bea-${kind}`)).toEqual({ session: welcome.sessionId });
    const cutAt = Date.now();
    proxy.cut();
    const pushed = await long.app.call({ type: 'push', session: welcome.sessionId, n: 7 });
    expect(pushed.sent).toBe(true);
    await until(seen, 'push');
    const push = named(seen, 'push')[0] as Seen;
    expect([push.arg, push.rest[0]]).toEqual(['gw', { n: 7 }]);
    expect(client.sessionId).toBe(welcome.sessionId);
    expect(named(seen, 'open')).toHaveLength(1);
    expect(named(seen, 'close')).toHaveLength(0);
    process.stdout.write(
      `client resume over ${kind}: cut -> push made while away received ${push.at - cutAt} ms ` +
        `(${named(seen, 'resumed').length} resume)\n`,
    );
    await client.close();
  }, 60000);

  it('past the grace ends the session resumeExpired (client and gateway), and reconnect opens a new one', async () => {
    const { proxy, endpoint } = await proxied(short, kind);
    const fromGateway = short.app.logs.length;
    const { client, seen } = player(endpoint);
    const welcome = await client.connect();
    expect(welcome.resumeGraceMs).toBe(SHORT_GRACE_MS);
    await client.request('login', `cyd-${kind}`);
    const pending = client.request('slow', { n: gates.expiring }, { timeoutMs: 60000 });
    proxy.target = undefined;
    proxy.cut();
    await expect(pending).rejects.toMatchObject({
      code: 'Unavailable',
      message: expect.stringContaining('resumeExpired'),
    });
    expect(named(seen, 'close').map((s) => s.arg)).toEqual([
      {
        reason: 'resumeExpired',
        code: undefined,
        detail: `not resumed within ${SHORT_GRACE_MS} ms`,
        by: 'connection',
      } satisfies SessionClientClose,
    ]);
    expect(
      await short.app.waitLog((m) => m.e === 'closed' && m.session === welcome.sessionId, 20000, fromGateway),
    ).toMatchObject({ reason: 'resumeExpired' });
    proxy.target = short.ports[kind];
    await until(seen, 'open', 2);
    expect((named(seen, 'open')[1]?.arg as SessionWelcome).sessionId).not.toBe(welcome.sessionId);
    await server.call({ type: 'release', n: gates.expiring });
    await client.close();
  }, 60000);
});

describe('the session client, refused', () => {
  it('a session that ended while its client was away is refused (resumeRefused, 1014); reconnect opens a new one', async () => {
    const { proxy, endpoint } = await proxied(short, 'tcp');
    const fromGateway = short.app.logs.length;
    const { client, seen } = player(endpoint);
    const welcome = await client.connect();
    await client.request('login', 'dex');
    proxy.target = undefined;
    proxy.cut();
    await until(seen, 'dropped');
    await short.app.waitLog((m) => m.e === 'dropped' && m.session === welcome.sessionId, 20000, fromGateway);
    // 128 KiB of pushes for a session that may hold 64 KiB: it ends slowConsumer while away.
    await short.app.call({ type: 'flood', actor: 'dex', bytes: 8192, count: 16 });
    await short.app.waitLog((m) => m.e === 'closed' && m.session === welcome.sessionId, 20000, fromGateway);
    proxy.target = short.ports.tcp;
    await until(seen, 'open', 2);
    expect(seen.filter((s) => s.name !== 'push').map((s) => s.name)).toEqual([
      'open',
      'dropped',
      'close',
      'open',
    ]);
    expect(named(seen, 'close')[0]?.arg).toEqual({
      reason: 'resumeRefused',
      code: 1014,
      detail: expect.any(String),
      by: 'server',
    });
    expect(client.sessionId).not.toBe(welcome.sessionId);
    await client.close();
  }, 60000);
});
