/**
 * Live relocation across processes, on a real redis-server (issue 17 item 8). Three object servers and
 * two callers; the relocatable `@Spot('mover')` of the fixture counts its ticks in its state and logs
 * every handler turn, so the servers' own logs prove what ran where, once, in each sender's order.
 *
 * - 100 moves, one after the other, while both callers keep requests and sends coming: every call ends
 *   `ok` exactly once, none runs twice, none out of its sender's order, and the tick count goes on.
 * - A chain of nine moves with a caller that sent nothing meanwhile: its call on the first route needs
 *   a ninth hop and ends `Unavailable`; its next call finds the object directly.
 * - The target killed (SIGKILL) while it restores, before relay-ready: the move aborts and the source
 *   runs what it held, once each, losing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp } from '../helpers/child-app.js';
import { waitFor } from '../helpers/index.js';
import {
  type CallResult,
  ObjectCluster,
  ask,
  calls,
  lines,
  outcomes,
  settle,
  turnReport,
} from './object-nodes.js';

interface Move {
  outcome?: string;
  owner?: string;
  code?: string;
  reason?: string;
  members?: { id: string; owner: string; withSpot: boolean }[];
}

async function relocate(app: ChildApp, id: string, extra: Record<string, unknown> = {}): Promise<Move[]> {
  return (await ask<{ moves: Move[] }>(app, { type: 'relocate', id, ...extra }, 120000)).moves;
}

/** The calls `app` relayed for `id` (a sender's own order flushes left out). */
const relayedCalls = (app: ChildApp, id: string) =>
  lines(app, 'followed', id).filter((m) => m.packet !== 'zlink:flush');

/**
 * The invariants every load here keeps, from the processes' own logs: every call ended `ok` (listed
 * with its reason otherwise) and ran exactly once, on whichever process held its object then; no
 * object entered two turns at once; each sender's calls ran in the order sent.
 */
async function everyCallRanOnce(apps: readonly ChildApp[], results: readonly CallResult[]) {
  expect(results.filter((r) => r.outcome !== 'ok')).toEqual([]);
  await settle(apps);
  const report = turnReport(apps);
  expect(report.overlaps).toEqual([]);
  expect(report.outOfOrder).toEqual([]);
  expect(report.ranTwice).toEqual([]);
  // A call that ran nowhere is listed with what each process logged of its object (to find why).
  const story = (r: CallResult) =>
    apps.flatMap((app) =>
      app.logs
        .filter((m) => m.id === r.target && m.e !== 'enter' && m.e !== 'exit' && m.e !== 'tick')
        .map((m) => `${app.name}: ${JSON.stringify(m)}`),
    );
  expect(results.filter((r) => !report.ran.has(r.op)).map((r) => ({ op: r.op, story: story(r) }))).toEqual(
    [],
  );
  return report;
}

async function createMover(app: ChildApp, id: string, node: string, init?: unknown): Promise<void> {
  const reply = await ask<{ refs: Record<string, { rid?: string }> }>(app, {
    type: 'create',
    spotType: 'mover',
    ids: [id],
    node,
    ...(init !== undefined && { init }),
  });
  expect(reply.refs[id]).toMatchObject({ rid: node });
}

describe('relocation across processes', () => {
  let cluster: ObjectCluster;
  let servers: ChildApp[];
  let callers: ChildApp[];

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-relocation');
    servers = await Promise.all(['s1', 's2', 's3'].map((rid) => cluster.node(rid, 'server')));
    callers = await Promise.all(['c1', 'c2'].map((rid) => cluster.node(rid, 'client')));
    // Callers peer with the servers only; servers with everyone.
    await Promise.all([
      ...servers.map((app) => ask(app, { type: 'waitPeers', count: 4 })),
      ...callers.map((app) => ask(app, { type: 'waitPeers', count: 3 })),
    ]);
  }, 90000);

  afterAll(async () => {
    await cluster?.close();
  });

  it('100 moves under requests and sends from two processes: nothing lost, nothing twice, order kept', async () => {
    const [s1] = servers as [ChildApp];
    const [c1, c2] = callers as [ChildApp, ChildApp];
    await createMover(c1, 'm-100', 's1', { tickMs: 20 });
    // Both callers keep calls coming for the whole run: 256 at once first, then one every 2 ms. c1's
    // spaced calls start as its burst is submitted, not once it ended: a caller that falls silent while
    // the object moves nine times finds its cached route nine moves old, and its next call is refused
    // at the ninth hop (the test of that limit below) — a pause of c1's between bursts did it, on CI.
    const burst = (app: ChildApp, tag: string, perTarget: number, extra: Record<string, unknown>) =>
      calls(app, { targets: ['m-100'], perTarget, kind: 'mixed', tag, timeoutMs: 30000, ...extra }, 180000);
    const load = Promise.all([
      burst(c1, 'a', 256, {}),
      burst(c1, 'b', 1500, { spacingMs: 2, seqBase: 256 }),
      burst(c2, 'a', 1500, { spacingMs: 2 }),
    ]);
    // One move after the other, 10 ms apart: faster than calls' own trips can take, a call would need
    // more than the 8 hops Message Follow allows (that limit has a test of its own below).
    const moves = await relocate(s1, 'm-100', { count: 100, pauseMs: 10 });
    const results: CallResult[] = (await load).flat();

    expect(moves.filter((m) => m.outcome !== 'committed')).toEqual([]);
    await settle(callers);
    const report = await everyCallRanOnce(servers, results);
    const ranOn = new Set([...report.ran.values()].map((r) => r.rid));
    expect(ranOn.size).toBe(3);
    // The count moved with the state: one tick line per increment, on whichever server it was.
    const ticks = servers.flatMap((app) => lines(app, 'tick', 'm-100').map((m) => m.n as number));
    // On a busy machine the moves outlast c2's spaced calls: a route nine moves old is refused at the
    // ninth hop (the limit's own test below), and the next call finds the object directly.
    const ticksNow = () => ask<{ n: number | { reason?: string } }>(c2, { type: 'ticks', id: 'm-100' });
    let now = await ticksNow();
    if (typeof now.n === 'object' && now.n.reason === 'followHops') now = await ticksNow();
    expect(ticks.length).toBeGreaterThan(20);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(now.n).toBeGreaterThanOrEqual(Math.max(...ticks));
    expect(servers.flatMap((app) => lines(app, 'restore', 'm-100'))).toHaveLength(100);
  }, 240000);

  it('a Spot moves 20 times with its member Actors under load from two processes: each its own move, nothing lost', async () => {
    const [s1] = servers as [ChildApp];
    const [c1, c2] = callers as [ChildApp, ChildApp];
    await createMover(c1, 'm-group', 's1', { tickMs: 20 });
    const actors = ['g-a', 'g-b', 'g-c'];
    await ask(c1, { type: 'create', actorType: 'member', ids: actors, node: 's2' });
    // Each Actor lives on s2: joining moves it to the Spot's owner first.
    const joined = await ask<{ joins: Record<string, unknown> }>(c1, {
      type: 'join',
      spot: 'm-group',
      actors,
    });
    for (const id of actors) expect(joined.joins[id]).toMatchObject({ actor: { id, rid: 's1' } });
    // Calls to the Spot and to each Actor, by id, from both callers, for the whole run.
    const targets = ['m-group', ...actors.map((id) => `actor:${id}`)];
    const burst = (app: ChildApp) =>
      calls(
        app,
        { targets, perTarget: 400, kind: 'mixed', tag: 'g', spacingMs: 1, timeoutMs: 30000 },
        180000,
      );
    const load = Promise.all([burst(c1), burst(c2)]);
    const moves = await relocate(s1, 'm-group', { count: 20, pauseMs: 20 });
    const results = (await load).flat();

    expect(moves.filter((m) => m.outcome !== 'committed')).toEqual([]);
    // Every move took every member along, to where the Spot went.
    for (const m of moves)
      expect(m.members).toEqual(actors.map((id) => ({ id, owner: m.owner, withSpot: true })));
    await settle(callers);
    const report = await everyCallRanOnce(servers, results);
    // Each object was restored once per move (its own move), and each Actor joined once, never left.
    for (const id of actors)
      expect(
        servers.flatMap((app) =>
          lines(app, 'object', id).filter((m) => m.reason === 'relocated' && m.state === 'activated'),
        ),
      ).toHaveLength(21); // the move that joined it, then one per move of the Spot
    expect(servers.flatMap((app) => lines(app, 'restore', 'm-group'))).toHaveLength(20);
    expect(servers.flatMap((app) => lines(app, 'join', 'm-group').map((m) => m.actor)).sort()).toEqual(
      actors,
    );
    expect(servers.flatMap((app) => lines(app, 'leave', 'm-group'))).toEqual([]);
    const members = await ask<{ members: string[] }>(c2, { type: 'members', id: 'm-group' });
    expect(members.members).toEqual(actors);
    // The calls met the moves: each object's calls ran on more than one server.
    for (const id of ['m-group', ...actors]) {
      const on = new Set(results.filter((r) => r.target.endsWith(id)).map((r) => report.ran.get(r.op)?.rid));
      expect(on.size).toBeGreaterThan(1);
    }
  }, 240000);

  it('a ninth hop is refused: the call on a route nine moves old ends Unavailable', async () => {
    const [s1] = servers as [ChildApp];
    const [c1, c2] = callers as [ChildApp, ChildApp];
    await createMover(c1, 'm-hops', 's1');
    // c2 caches the first route, then sends nothing while the object moves nine times.
    expect(outcomes(await calls(c2, { targets: ['m-hops'], tag: 'warm' }))).toEqual({ ok: 1 });
    const moves = await relocate(s1, 'm-hops', { count: 9 });
    expect(moves.filter((m) => m.outcome !== 'committed')).toEqual([]);
    const [late] = await calls(c2, { targets: ['m-hops'], tag: 'late', seqBase: 1 });
    expect(late).toMatchObject({ outcome: 'Unavailable', reason: 'followHops' });
    // The stale answer dropped the entry: the next call reads the owner and goes direct.
    expect(outcomes(await calls(c2, { targets: ['m-hops'], tag: 'direct', seqBase: 2 }))).toEqual({ ok: 1 });
    await settle(servers);
    expect(turnReport(servers).ran.has(late?.op as string)).toBe(false);
  }, 120000);

  it('the target killed before relay-ready: the source resumes and loses nothing', async () => {
    const [s1] = servers as [ChildApp];
    const [c1] = callers as [ChildApp];
    const slow = await cluster.node('s-slow', 'server', { restoreHoldMs: 60000 });
    await Promise.all([ask(s1, { type: 'waitPeers', count: 5 }), ask(c1, { type: 'waitPeers', count: 4 })]);
    await createMover(c1, 'm-kill', 's1');
    const moving = relocate(c1, 'm-kill', { target: 's-slow', timeoutMs: 30000 });
    // The move is in the target's restore (its log says so): calls now are held by the source.
    const deadline = Date.now() + 20000;
    while (lines(slow, 'restore', 'm-kill').length === 0) {
      if (Date.now() > deadline) throw new Error('the target never started its restore');
      await new Promise((r) => setTimeout(r, 20));
    }
    const held = calls(c1, { targets: ['m-kill'], perTarget: 50, kind: 'mixed', tag: 'held' });
    await new Promise((r) => setTimeout(r, 200));
    slow.kill('SIGKILL');
    const [move] = await moving;
    expect(move).toMatchObject({ outcome: 'aborted', code: 'Unavailable' });
    const results = await held;
    expect(outcomes(results)).toEqual({ ok: 50 });
    await settle([...servers, c1]);
    const report = turnReport(servers);
    expect(report.ranTwice).toEqual([]);
    expect(report.outOfOrder).toEqual([]);
    expect(results.every((r) => report.ran.get(r.op)?.rid === 's1')).toBe(true);
  }, 120000);

  it('after the notice the next call goes direct: one relay, then none', async () => {
    const [s1, s2] = servers as [ChildApp, ChildApp];
    const [c1] = callers as [ChildApp];
    await createMover(c1, 'm-notice', 's1');
    expect(outcomes(await calls(c1, { targets: ['m-notice'], tag: 'warm' }))).toEqual({ ok: 1 });
    expect(await relocate(s1, 'm-notice', { target: 's2' })).toMatchObject([{ outcome: 'committed' }]);
    // The first call takes the old route: s1 relays it and tells c1.
    const [first] = await calls(c1, { targets: ['m-notice'], tag: 'first', seqBase: 1 });
    expect(first).toMatchObject({ outcome: 'ok', rid: 's2' });
    await settle([s1]);
    expect(relayedCalls(s1, 'm-notice')).toMatchObject([{ hops: 1, to: 's2', packet: 'work' }]);
    // The notice (s1 → c1) and the reply (s2 → c1) travel on different links: under load the reply
    // can come first. Once c1 has taken the notice, every later call goes straight to s2.
    await waitFor(
      () => lines(c1, 'route', 'm-notice').some((m) => m.reason === 'moved'),
      20000,
      "c1 dropping the old route on s1's notice",
    );
    const later = await calls(c1, { targets: ['m-notice'], perTarget: 5, tag: 'later', seqBase: 2 });
    expect(later.every((r) => r.outcome === 'ok' && r.rid === 's2')).toBe(true);
    await settle([s1, s2]);
    expect(relayedCalls(s1, 'm-notice')).toHaveLength(1);
  }, 60000);

  it('with the notice off, calls take the detour until the cached route expires, then go direct', async () => {
    const quiet = await Promise.all(
      ['q1', 'q2'].map((rid) => cluster.node(rid, 'server', { messageFollowNotice: false })),
    );
    const [q1] = quiet as [ChildApp, ChildApp];
    const caller = await cluster.node('c-short', 'client', { routeCacheMaxAgeMs: 1000 });
    await Promise.all([
      // s1-s3, q2, c1, c2, c-short (s-slow is gone); the caller sees the five servers.
      ask(q1, { type: 'waitPeers', count: 7 }),
      ask(caller, { type: 'waitPeers', count: 5 }),
    ]);
    await createMover(caller, 'm-quiet', 'q1');
    expect(outcomes(await calls(caller, { targets: ['m-quiet'], tag: 'warm' }))).toEqual({ ok: 1 });
    expect(await relocate(q1, 'm-quiet', { target: 'q2' })).toMatchObject([{ outcome: 'committed' }]);
    // One call every 100 ms for 2 s: the cached route (1 s at most) expires within them.
    const results = await calls(caller, {
      targets: ['m-quiet'],
      perTarget: 20,
      spacingMs: 100,
      tag: 'detour',
      seqBase: 1,
    });
    expect(results.every((r) => r.outcome === 'ok' && r.rid === 'q2')).toBe(true);
    await settle([q1]);
    // Without the notice the detour went on (more than the one relay a notice allows) until the
    // cached route expired; the calls after that went straight to q2.
    const relayed = relayedCalls(q1, 'm-quiet').length;
    expect(relayed).toBeGreaterThanOrEqual(2);
    expect(relayed).toBeLessThanOrEqual(12);
  }, 90000);

  it('a rolling restart of three object servers by drain-relocate under traffic loses nothing', async () => {
    const [c1, c2] = callers as [ChildApp, ChildApp];
    const rids = ['r1', 'r2', 'r3'];
    const rolling = await Promise.all(
      rids.map((rid) => cluster.node(rid, 'server', { onDrain: 'relocate' })),
    );
    for (const app of [...rolling, c1, c2]) await ask(app, { type: 'waitPeers', count: 4 });
    const ids = Array.from({ length: 12 }, (_, i) => `m-roll-${i}`);
    for (const [i, id] of ids.entries()) await createMover(c1, id, rids[i % 3] as string, { tickMs: 50 });
    // Both callers keep calls coming to every room while each server in turn stops and comes back.
    const load = Promise.all(
      [c1, c2].map((app) =>
        calls(
          app,
          { targets: ids, perTarget: 50, kind: 'mixed', spacingMs: 5, tag: 'roll', timeoutMs: 30000 },
          180000,
        ),
      ),
    );
    for (const [i, rid] of rids.entries()) {
      const old = rolling[i] as ChildApp;
      // A graceful stop: the runtime drains (its rooms move to the other servers), then closes.
      old.send({ type: 'close' });
      await old.next('closed', 60000);
      await old.exited;
      const fresh = await cluster.node(rid, 'server', { onDrain: 'relocate' });
      await ask(fresh, { type: 'waitPeers', count: 4 });
    }
    const results = (await load).flat();
    // Every process of the cluster: the rooms may have moved to any server hosting the type.
    await everyCallRanOnce(cluster.apps, results);
    // Every room moved out of each server as it stopped: none was closed by a stop.
    const stopped = rolling.flatMap((app) =>
      lines(app, 'deactivate').filter((m) => m.reason !== 'relocated'),
    );
    expect(stopped).toEqual([]);
  }, 240000);
});
