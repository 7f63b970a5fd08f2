/**
 * Sessions between real processes (issue 30 item 7) on a real redis-server: a gateway owning the
 * sessions, two object servers owning the players, and a client process with 200 sessions, each bound
 * to its own player Actor.
 *
 * - 20 relocations under traffic: every relayed message handled exactly once and in session order
 *   (the servers' own logs, and each player's own check in its moving state), every push received
 *   once and in order, no request failed, and Redis's own `INFO commandstats` shows no authority read
 *   per relayed message (HMGET runs only in the object stores' scripts: see objects-multi-process).
 * - The Session owner killed: every bound player hears its sessions end (`ownerLost`).
 * - An Actor owner killed: its sessions' requests end with the documented error (`Unavailable`), the
 *   sessions stay open, and the gateway reports the lost bindings.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ChildApp, type ChildMessage } from '../helpers/child-app.js';
import { RedisServer } from '../helpers/redis-server.js';
import { ZLinkSessionClient } from '../../lib/session-client/index.js';

const SESSIONS = 200;
const MOVES = 20;

interface Report {
  readonly name: string;
  readonly session: string;
  readonly last: number;
  readonly failed: { n: number; code: string }[];
  readonly pushes: number;
  readonly pushesInOrder: boolean;
  readonly closedBy: string | undefined;
}

let redis: RedisServer | undefined;
const apps: ChildApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) {
    app.kill('SIGKILL');
    await app.exited;
  }
  await redis?.stop();
  redis = undefined;
});

async function start(
  name: string,
  script: string,
  args: Record<string, unknown>,
): Promise<[ChildApp, ChildMessage]> {
  const app = new ChildApp(name, script, args);
  apps.push(app);
  return [app, await app.next('ready', 60000)];
}

async function world(prefix: string): Promise<{ gateway: ChildApp; a: ChildApp; b: ChildApp; port: number }> {
  redis = await RedisServer.start();
  const common = { redisUrl: redis.url, keyPrefix: prefix };
  const [a] = await start('server-a', 'e2e/session-node.app.js', {
    ...common,
    rid: 'server-a',
    role: 'server',
  });
  const [b] = await start('server-b', 'e2e/session-node.app.js', {
    ...common,
    rid: 'server-b',
    role: 'server',
  });
  const [gateway, ready] = await start('gateway', 'e2e/session-node.app.js', {
    ...common,
    rid: 'gateway',
    role: 'gateway',
    createOn: 'server-a',
  });
  return { gateway, a, b, port: ready.port as number };
}

const handled = (app: ChildApp) => app.logs.filter((m) => m.e === 'handled');

async function sync(app: ChildApp): Promise<void> {
  await app.call({ type: 'sync' }, 15000);
}

describe('sessions across processes', () => {
  it(`${SESSIONS} sessions, ${MOVES} relocations under traffic: once each, in order, no store read per message`, async () => {
    const { gateway, a, b, port } = await world('sess-mp');
    const [players, ready] = await start('players', 'e2e/session-players.app.js', { port, count: SESSIONS });
    const names = (ready.sessions as { name: string; session: string }[]).map((s) => s.name);
    expect(names).toHaveLength(SESSIONS);
    await (redis as RedisServer).resetStats();
    await players.call({ type: 'start' });
    const moves: ChildMessage[] = [];
    // Ten players move to server-b and back under traffic: twenty relocations.
    for (let i = 0; i < MOVES; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const id = names[(Math.floor(i / 2) * 37) % SESSIONS] as string;
      moves.push(
        await gateway.call({ type: 'relocate', id, target: i % 2 === 0 ? 'server-b' : 'server-a' }, 30000),
      );
    }
    const stop = (await players.call({ type: 'stop' }, 120000)) as unknown as { report: Report[] };
    const reads = await (redis as RedisServer).commandCalls('hmget');
    await Promise.all([sync(a), sync(b)]);

    expect(moves.filter((m) => m.outcome !== 'committed')).toEqual([]);
    const report = stop.report;
    expect(report.filter((r) => r.failed.length > 0 || !r.pushesInOrder || r.closedBy)).toEqual([]);
    const relayed = report.reduce((n, r) => n + r.last, 0);
    // Exactly once, from the servers' own logs: every (session, n) once, all of them.
    const seen = new Map<string, number>();
    for (const m of [...handled(a), ...handled(b)]) {
      const key = `${m.session as string}/${m.n as number}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    expect([...seen].filter(([, count]) => count !== 1)).toEqual([]);
    expect(seen.size).toBe(relayed);
    for (const r of report)
      for (let n = 1; n <= r.last; n++)
        if (!seen.has(`${r.session}/${n}`)) throw new Error(`${r.name} ${n} never ran`);
    // In session order, as each player saw it in its own state (which moved with it).
    expect([...a.logs, ...b.logs].filter((m) => m.e === 'outOfOrder')).toEqual([]);
    expect(handled(b).length).toBeGreaterThan(0);
    // No authority read per message: the moves' own reads only (a few per move), none per relay.
    process.stdout.write(`sessions e2e: ${relayed} relayed messages, ${MOVES} moves, ${reads} HMGET\n`);
    expect(reads).toBeLessThan(MOVES * 10);
    expect(relayed).toBeGreaterThan(50 * reads);
  }, 240000);

  it('the Session owner killed: every bound player hears its session end', async () => {
    const { gateway, a, port } = await world('sess-owner');
    const clients = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const c = new ZLinkSessionClient({ host: '127.0.0.1', port });
        await c.connect();
        await c.request('login', `p-${i}`);
        return c;
      }),
    );
    gateway.kill('SIGKILL');
    await gateway.exited;
    const heard = async () =>
      a.logs.filter((m) => m.e === 'sessionClosed' && m.reason === 'ownerLost').length;
    const deadline = Date.now() + 20000;
    while ((await heard()) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await heard()).toBe(3);
    for (const c of clients) await c.close();
  }, 60000);

  it('an Actor owner killed: its requests end Unavailable, the session stays open', async () => {
    const { gateway, a, port } = await world('sess-actor');
    const client = new ZLinkSessionClient({ host: '127.0.0.1', port, requestTimeoutMs: 15000 });
    await client.connect();
    await client.request('login', 'p-lost');
    expect(await client.request('step', 1)).toMatchObject({ n: 1, rid: 'server-a' });
    a.kill('SIGKILL');
    await a.exited;
    // The first request may reach the gateway before the gateway has seen its peer go (seen under
    // load): relayed to the dead owner, it ends RouteError, "may have run" (docs/sessions.md#errors).
    const first = await client.request('step', 2).then(
      () => 'answered',
      (error: { remote?: { code?: string } }) => error.remote?.code,
    );
    expect(['Unavailable', 'RouteError']).toContain(first);
    expect(client.isOpen).toBe(true);
    await gateway.waitLog((m) => m.e === 'session:unbound' && m.reason === 'ownerLost', 15000);
    // The binding stays, lost: each relay says so until the application binds a new incarnation.
    await expect(client.request('step', 3)).rejects.toMatchObject({ remote: { code: 'Unavailable' } });
    await client.close();
  }, 60000);
});
