/**
 * Three object-server processes, two caller processes (objectRole 'client'), 1000 Spots, one real
 * redis-server (issue 16 item 10): once every caller has called every Spot, a second pass of calls
 * to all 1000 reads no authority record at all, counted by Redis itself; each Spot's handler is
 * never entered twice at once, and each sender's calls to a Spot run in the order it made them. Then
 * a Spot is destroyed and re-created under the same owner with calls in flight: calls the owner
 * accepts on the caller's old route run on the new incarnation (admission checks owner fences, not
 * ObjectGeneration).
 *
 * How authority reads are told apart from the rest of the store traffic: every store operation is
 * a Lua script (EVALSHA), so EVALSHA also counts descriptor refreshes and the full reads of
 * discovery and owner leases, which never stop. But Redis's `INFO commandstats` also counts the
 * commands a script runs, and HMGET is run only by the object stores' scripts (authority get,
 * compare-and-swap, list; the Location Store's scripts use HGET) — the first test below checks that
 * on the scripts' sources, so the count cannot silently start to include lease traffic. With no
 * creation or destroy under way, `cmdstat_hmget` is exactly the number of authority reads. The
 * warm-up pass proves the counter counts: it must show exactly one read per (caller, Spot).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp } from '../helpers/child-app.js';
import { OBJECT_CAS, OBJECT_GET, OBJECT_LIST } from '../../lib/store/redis/object-scripts.js';
import { LIST, PUT, REFRESH, REMOVE } from '../../lib/store/redis/scripts.js';
import {
  type ObjectRefOut,
  ObjectCluster,
  ask,
  calls,
  lines,
  outcomes,
  settle,
  turnReport,
} from './object-nodes.js';

const SPOTS = 1000;
/** Calls per (caller, Spot) in the cached pass: 2 callers x 1000 Spots x 5 = 10 000 calls. */
const HOT_PER_TARGET = 5;
const ids = Array.from({ length: SPOTS }, (_, i) => `room-${i}`);

describe('3 object servers, 2 callers, 1000 Spots: cached calls read no authority record', () => {
  let cluster: ObjectCluster;
  let servers: ChildApp[] = [];
  let callers: ChildApp[] = [];

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-objects');
    // A cache max age longer than both passes together (the most Message Follow's default allows).
    const extra = { routeCacheMaxAgeMs: 25000 };
    servers = await Promise.all(['srv-a', 'srv-b', 'srv-c'].map((rid) => cluster.node(rid, 'server', extra)));
    callers = await Promise.all(['caller-1', 'caller-2'].map((rid) => cluster.node(rid, 'client', extra)));
    // Callers link with every server, not with each other.
    await Promise.all([
      ...servers.map((n) => ask(n, { type: 'waitPeers', count: 4 })),
      ...callers.map((n) => ask(n, { type: 'waitPeers', count: 3 })),
    ]);
  }, 120000);

  afterAll(() => cluster?.close());

  it('HMGET runs only in the object stores’ scripts, never in the Location Store’s', () => {
    for (const script of [OBJECT_GET, OBJECT_CAS, OBJECT_LIST]) expect(script).toContain("'HMGET'");
    for (const script of [LIST, PUT, REFRESH, REMOVE]) expect(script).not.toMatch(/HMGET/i);
  });

  it('after a warm-up pass, a second pass to all 1000 Spots costs zero authority reads; one turn at a time, per-sender order', async () => {
    const { refs } = await ask<{ refs: Record<string, ObjectRefOut> }>(
      callers[0] as ChildApp,
      { type: 'create', ids, concurrency: 20 },
      120000,
    );
    const owners: Record<string, number> = {};
    for (const id of ids) {
      const ref = refs[id] as ObjectRefOut;
      expect(ref).toMatchObject({ id, objectGeneration: expect.any(Number) });
      owners[ref.rid] = (owners[ref.rid] ?? 0) + 1;
    }
    // Placement in turn over the three servers.
    expect(Object.keys(owners).sort()).toEqual(['srv-a', 'srv-b', 'srv-c']);

    await cluster.redis.resetStats();
    const warm = await Promise.all(
      callers.map((c) => calls(c, { tag: 'warm', targets: ids, perTarget: 1, seqBase: 0 }, 120000)),
    );
    for (const results of warm) expect(outcomes(results)).toEqual({ ok: SPOTS });
    // One store read per (caller, Spot): the counter counts authority reads, and nothing else.
    expect(await cluster.redis.commandCalls('hmget')).toBe(2 * SPOTS);

    await cluster.redis.resetStats();
    const started = Date.now();
    const second = await Promise.all(
      callers.map((c) =>
        calls(c, { tag: 'hot', targets: ids, perTarget: HOT_PER_TARGET, kind: 'mixed', seqBase: 1 }, 120000),
      ),
    );
    const elapsed = Date.now() - started;
    for (const results of second) expect(outcomes(results)).toEqual({ ok: HOT_PER_TARGET * SPOTS });
    // No caller judged the store failing (a recovery drops every cached route): named first, as the cause.
    await settle(callers);
    expect(callers.flatMap((c) => lines(c, 'store'))).toEqual([]);
    expect(await cluster.redis.commandCalls('hmget')).toBe(0);
    // The lease and discovery scripts went on meanwhile: the store was there and busy, just not read for routes.
    const scripts = await cluster.redis.commandCalls('evalsha');
    expect(scripts).toBeGreaterThan(0);
    console.log(
      `objects e2e: ${2 * HOT_PER_TARGET * SPOTS} cached calls (requests and sends) in ${elapsed} ms, 0 authority reads (${scripts} lease/discovery scripts meanwhile)`,
    );

    // Every call ran exactly once, on the owner its ref names, one turn at a time, in sender order.
    await settle(servers);
    const report = turnReport(servers);
    expect(report.overlaps).toEqual([]);
    expect(report.outOfOrder).toEqual([]);
    expect(report.ranTwice).toEqual([]);
    const results = [...warm, ...second].flat();
    expect(report.ran.size).toBe(results.length);
    for (const r of results) {
      const ref = refs[r.target] as ObjectRefOut;
      expect(report.ran.get(r.op)).toEqual({ rid: ref.rid, gen: ref.objectGeneration });
      // A request's reply names where it ran; a send has no reply.
      if (r.gen !== undefined) expect(r).toMatchObject({ rid: ref.rid, gen: ref.objectGeneration });
    }
  }, 300000);
  it('destroy and re-create under the same owner with calls in flight: calls accepted after it run on the new incarnation', async () => {
    const caller = callers[0] as ChildApp;
    const id = 'recreated';
    const { refs } = await ask<{ refs: Record<string, ObjectRefOut> }>(caller, {
      type: 'create',
      ids: [id],
      node: 'srv-a',
    });
    const first = refs[id] as ObjectRefOut;
    const owner = servers[0] as ChildApp;
    const warm = await calls(caller, { tag: 're-warm', targets: [id], seqBase: 0 });
    expect(warm).toMatchObject([{ outcome: 'ok', gen: first.objectGeneration }]);

    // A burst in flight: the first turn holds the object while the rest wait in its queue.
    const from = owner.logs.length;
    const burst = calls(caller, { tag: 're-b1', targets: [id], perTarget: 10, holdMs: 50, seqBase: 1 });
    await owner.waitLog((m) => m.e === 'enter' && m.id === id, 15000, from);
    const { destroyed, recreated } = await ask<{ destroyed: string; recreated: ObjectRefOut }>(owner, {
      type: 'destroy',
      ref: first,
      recreate: true,
    });
    expect(destroyed).toBe('ok');
    expect(recreated).toMatchObject({ id, rid: 'srv-a' });
    expect(recreated.objectGeneration).toBeGreaterThan(first.objectGeneration);
    const b1 = await burst;
    // Each one terminal: the turn running at destroy finished on the old incarnation, the waiting
    // ones ended Unavailable (the object was destroyed); none ran on the new one.
    expect(b1).toHaveLength(10);
    expect(b1.find((r) => r.seq === 1)).toMatchObject({ outcome: 'ok', gen: first.objectGeneration });
    for (const r of b1) {
      if (r.outcome === 'ok') expect(r.gen).toBe(first.objectGeneration);
      else expect(r).toMatchObject({ outcome: 'Unavailable', reason: 'destroyed' });
    }

    // The caller still holds the route it resolved for the old incarnation…
    expect(await ask(caller, { type: 'resolve', id })).toMatchObject({
      tag: 'ReadyRoute',
      gen: first.objectGeneration,
      rid: 'srv-a',
    });
    // …and the owner admits calls on it by owner fences, not ObjectGeneration: they run on the
    // current object.
    const b2 = await calls(caller, { tag: 're-b2', targets: [id], perTarget: 10, seqBase: 11 });
    expect(outcomes(b2)).toEqual({ ok: 10 });
    for (const r of b2) expect(r.gen).toBe(recreated.objectGeneration);
    await settle(servers);
    const report = turnReport(servers);
    for (const r of b2)
      expect(report.ran.get(r.op)).toEqual({ rid: 'srv-a', gen: recreated.objectGeneration });
    for (const r of b1) {
      const ran = report.ran.get(r.op);
      if (r.outcome === 'ok') expect(ran).toEqual({ rid: 'srv-a', gen: first.objectGeneration });
      else expect(ran).toBeUndefined();
    }
    expect(report.overlaps).toEqual([]);
    expect(report.outOfOrder).toEqual([]);
    expect(report.ranTwice).toEqual([]);
  }, 60000);
});
