/**
 * A rolling restart with default options (issue 54 item 1, docs/objects.md#rolling-restarts), between
 * real processes on a real redis-server: three object servers, each in turn stopped by SIGTERM (Nest's
 * shutdown hooks: drain, then close) and started again once the previous one is back, while a client
 * keeps calling three rooms (`@Spot('mover')`, two member Actors each) and three lone players
 * (`@Actor('member')`). Each object counts its turns in its state and answers the count, so the
 * replies themselves show whether the state survived every move. From the processes' own replies and
 * logs: no call ends `NotFound` (or any other error), every call has one terminal and ran exactly
 * once, in its sender's order, each count is whole, and no stop released an object.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp, ChildMessage } from '../helpers/child-app.js';
import { type CallResult, ObjectCluster, ask, calls, lines, settle, turnReport } from './object-nodes.js';

const SERVERS = ['r1', 'r2', 'r3'];
const ROOMS = ['room-1', 'room-2', 'room-3'];
/** Two members per room, created on the room's node; `actor:` names an Actor for the `calls` command. */
const MEMBERS = ROOMS.flatMap((room) => [`${room}-a`, `${room}-b`]);
const LONERS = ['solo-1', 'solo-2', 'solo-3'];
const TARGETS = [...ROOMS, ...[...MEMBERS, ...LONERS].map((id) => `actor:${id}`)];
/** Past every sequence number of the load: the last request to each object comes after all of it. */
const FINAL_SEQ = 1_000_000;

/** `work` resolved within `ms`, or a rejection naming `what` (every wait of this test has a bound). */
async function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a rolling restart of three object servers with default options', () => {
  let cluster: ObjectCluster;

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-rolling');
  }, 60000);

  afterAll(async () => {
    await cluster?.close();
  });

  it('under calls to rooms with members and to players: no NotFound, one terminal each, every count whole', async () => {
    const first = await Promise.all(SERVERS.map((rid) => cluster.node(rid, 'server')));
    const client = await cluster.node('c1', 'client');
    // Servers peer with everyone, the client with the servers.
    await Promise.all([...first, client].map((app) => ask(app, { type: 'waitPeers', count: 3 })));
    for (const [i, room] of ROOMS.entries()) {
      const node = SERVERS[i] as string;
      const members = MEMBERS.filter((id) => id.startsWith(`${room}-`));
      await ask(client, { type: 'create', spotType: 'mover', ids: [room], node });
      await ask(client, { type: 'create', actorType: 'member', ids: [...members, LONERS[i]], node });
      const joined = await ask<{ joins: Record<string, unknown> }>(client, {
        type: 'join',
        spot: room,
        actors: members,
      });
      for (const id of members) expect(joined.joins[id]).toMatchObject({ actor: { id, rid: node } });
    }

    // One call every 5 ms, round after round over every object, requests and sends alternating, until
    // the last server is back.
    const load = calls(
      client,
      { targets: TARGETS, kind: 'mixed', spacingMs: 5, tag: 'roll', timeoutMs: 20000, untilStopped: true },
      120000,
    );
    const live = new Map(SERVERS.map((rid, i) => [rid, first[i] as ChildApp]));
    const stopMs: number[] = [];
    for (const rid of SERVERS) {
      const old = live.get(rid) as ChildApp;
      // Calls reach this server before it stops: it holds objects and serves them.
      const served = old.logs.length;
      await old.waitLog((m) => m.e === 'enter', 15000, served);
      const stopping = Date.now();
      old.kill('SIGTERM');
      const exit = await bounded(old.exited, 30000, `${rid} stopping on SIGTERM`);
      stopMs.push(Date.now() - stopping);
      // Nest re-raises the signal once its shutdown hooks are done: a graceful stop, not a crash.
      expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
      const fresh = await cluster.node(rid, 'server');
      live.set(rid, fresh);
      // Back: a ready peer of every other node, and they of it.
      await Promise.all([...live.values(), client].map((app) => ask(app, { type: 'waitPeers', count: 3 })));
    }
    client.send({ type: 'stopCalls', tag: 'roll' });
    const results = await load;
    // One request more to each object, after all the load: its reply is the object's whole count.
    const last = await calls(client, { targets: TARGETS, seqBase: FINAL_SEQ, tag: 'final' });
    const apps = cluster.apps;
    await settle(apps);

    // Every call had one terminal, its reply: none NotFound, none any other error.
    const all: CallResult[] = [...results, ...last];
    expect(all.filter((r) => r.outcome !== 'ok')).toEqual([]);
    expect(new Set(all.map((r) => r.op)).size).toBe(all.length);
    // Each ran exactly once, on whichever process held its object then, in the sender's order.
    const report = turnReport(apps);
    expect(report.overlaps).toEqual([]);
    expect(report.outOfOrder).toEqual([]);
    expect(report.ranTwice).toEqual([]);
    expect(all.filter((r) => !report.ran.has(r.op)).map((r) => r.op)).toEqual([]);
    // The counts moved with the objects: a request's reply counts every call to its object up to it
    // (one sender, run in its order), and the last one every call of the run.
    const wrong = results.filter((r) => r.n !== undefined && r.n !== r.seq + 1);
    expect(wrong.map((r) => `${r.target} seq ${r.seq}: n ${String(r.n)}`)).toEqual([]);
    const sent = (target: string) => results.filter((r) => r.target === target).length;
    expect(Object.fromEntries(last.map((r) => [r.target, r.n]))).toEqual(
      Object.fromEntries(TARGETS.map((t) => [t, sent(t) + 1])),
    );
    // The rooms kept their members, beside them.
    const owner = new Map(last.map((r) => [r.target, r.rid]));
    for (const id of MEMBERS) {
      const room = id.slice(0, id.lastIndexOf('-'));
      expect(last.find((r) => r.target === `actor:${id}`)).toMatchObject({
        spot: room,
        rid: owner.get(room),
      });
    }
    // No stop released an object: every deactivation of the run is a move's.
    const released = apps.flatMap((app) =>
      lines(app, 'deactivate')
        .filter((m: ChildMessage) => m.reason !== 'relocated')
        .map((m) => `${app.name}: ${String(m.id)} ${String(m.reason)}`),
    );
    expect(released).toEqual([]);
    // Each stopped server moved objects out, and calls ran while the servers came and went.
    for (const app of first) expect(lines(app, 'deactivate').length).toBeGreaterThan(0);
    const perRound = TARGETS.length;
    expect(results.length).toBeGreaterThan(SERVERS.length * perRound);
    process.stdout.write(
      `rolling restart: ${results.length} calls; stops (SIGTERM to exit) ${stopMs.join(', ')} ms\n`,
    );
  }, 60000);
});
