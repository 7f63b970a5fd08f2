/**
 * Object owners lost across processes, on a real redis-server (issue 16 item 10; lease timing of the
 * fixture: ttl 3 s, refresh 0.5 s, margin 0.5 s, full reads every 0.5 s).
 *
 * SIGKILL: an owner dies with requests in flight. Every call ends with exactly one terminal, no
 * operation runs twice (the servers' own handler logs), later plain calls to its Spots end
 * `Unavailable` and never bring them back; only an explicit get-or-create does, on a live server, with a
 * larger ObjectGeneration, once the dead owner's lease has lapsed.
 *
 * SIGSTOP: an owner is frozen past its lease (every other process sees it gone) and one of its Spots
 * is taken over meanwhile. While its lease is still not refreshed after SIGCONT (the store is held
 * with CLIENT PAUSE so that window is certain, not a race with the first refresh), it refuses object
 * work (`Rejected`) and runs no timer; once refreshed it serves its Spots again, and the one taken
 * over never runs there again.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp } from '../helpers/child-app.js';
import {
  type CallResult,
  type ObjectRefOut,
  ObjectCluster,
  ask,
  calls,
  lines,
  outcomes,
  settle,
  turnReport,
} from './object-nodes.js';

/** Asks `app` to resolve `id` until `done` accepts the answer (bounded). */
async function resolveUntil(
  app: ChildApp,
  id: string,
  done: (r: { tag: string; reason?: string }) => boolean,
  timeoutMs = 20000,
): Promise<{ tag: string; reason?: string; gen?: number; rid?: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await ask<{ tag: string; reason?: string; gen?: number; rid?: string }>(app, {
      type: 'resolve',
      id,
    });
    if (done(r)) return r;
    if (Date.now() > deadline) throw new Error(`${app.name}: resolve '${id}' still ${JSON.stringify(r)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const leaseGone = (r: { tag: string; reason?: string }) =>
  r.tag === 'Unavailable' && r.reason === 'ownerLeaseGone';

describe('object owners lost: SIGKILL and SIGSTOP', () => {
  let cluster: ObjectCluster;
  let survivors: ChildApp[] = [];
  let victim: ChildApp;
  let sleeper: ChildApp;
  let caller: ChildApp;

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-owner-loss');
    [victim, sleeper, ...survivors] = await Promise.all(
      ['srv-kill', 'srv-stop', 'srv-a', 'srv-b'].map((rid) => cluster.node(rid, 'server')),
    );
    caller = await cluster.node('caller', 'client');
    await Promise.all([
      ask(caller, { type: 'waitPeers', count: 4 }),
      ...[victim, sleeper, ...survivors].map((n) => ask(n, { type: 'waitPeers', count: 4 })),
    ]);
  }, 120000);

  afterAll(() => cluster?.close());

  it('SIGKILL under load: one terminal per call, nothing run twice; plain calls end Unavailable; get-or-create takes over elsewhere', async () => {
    const doomed = Array.from({ length: 20 }, (_, i) => `k-${i}`);
    const safe = Array.from({ length: 20 }, (_, i) => `s-${i}`);
    const created = {
      ...(
        await ask<{ refs: Record<string, ObjectRefOut> }>(caller, {
          type: 'create',
          ids: doomed,
          node: 'srv-kill',
          concurrency: 10,
        })
      ).refs,
      ...(
        await ask<{ refs: Record<string, ObjectRefOut> }>(caller, {
          type: 'create',
          ids: safe,
          node: 'srv-a',
          concurrency: 10,
        })
      ).refs,
    };
    for (const id of [...doomed, ...safe])
      expect(created[id]).toMatchObject({ id, objectGeneration: expect.any(Number) });

    const perTarget = 40;
    const total = perTarget * (doomed.length + safe.length);
    caller.send({
      type: 'calls',
      tag: 'load',
      targets: [...doomed, ...safe],
      perTarget,
      holdMs: 20,
      timeoutMs: 8000,
      progressAt: 100,
    });
    await caller.next('progress', 30000);
    victim.kill('SIGKILL');
    await victim.exited;
    const { results } = (await caller.next('calls', 60000)) as unknown as { results: CallResult[] };

    // Exactly one terminal per call.
    expect(results).toHaveLength(total);
    expect(new Set(results.map((r) => r.op)).size).toBe(total);
    const onSafe = results.filter((r) => r.target.startsWith('s-'));
    const onDoomed = results.filter((r) => r.target.startsWith('k-'));
    expect(outcomes(onSafe)).toEqual({ ok: safe.length * perTarget });
    const lost = outcomes(onDoomed);
    console.log(`objects e2e SIGKILL: calls to the killed owner's Spots ended ${JSON.stringify(lost)}`);
    for (const outcome of Object.keys(lost))
      expect(['ok', 'RouteError', 'Unavailable', 'Timeout']).toContain(outcome);
    expect(lost.ok ?? 0).toBeGreaterThan(0);
    expect(lost.ok ?? 0).toBeLessThan(onDoomed.length);

    // The servers' logs: nothing ran twice, every reply came from a turn that ran there, one turn at a time.
    const servers = [victim, ...survivors];
    await settle(servers);
    const report = turnReport(servers);
    expect(report.ranTwice).toEqual([]);
    expect(report.overlaps).toEqual([]);
    expect(report.outOfOrder).toEqual([]);
    for (const r of results.filter((x) => x.outcome === 'ok'))
      expect(report.ran.get(r.op)).toEqual({ rid: created[r.target]?.rid, gen: r.gen });
    // A call refused before it was sent never ran anywhere.
    for (const r of onDoomed.filter((x) => x.outcome === 'Unavailable'))
      expect(report.ran.get(r.op)).toBeUndefined();

    // Once the dead owner's lease has lapsed (for the caller and for both survivors), plain calls end
    // Unavailable: the Spots exist in the store but nobody may take messages for them.
    for (const app of [caller, sleeper, ...survivors]) await resolveUntil(app, 'k-0', leaseGone);
    const after = await calls(caller, { tag: 'after', targets: doomed, seqBase: perTarget });
    expect(outcomes(after)).toEqual({ Unavailable: doomed.length });
    for (const r of after) expect(r.reason).toBe('ownerLeaseGone');
    // …and no plain call re-activated one anywhere.
    const alive = [sleeper, ...survivors];
    await settle(alive);
    for (const id of doomed) for (const s of alive) expect(lines(s, 'activate', id)).toEqual([]);

    // An explicit get-or-create takes k-0 over on a live server with a larger ObjectGeneration.
    const { result: taken } = await ask<{ result: ObjectRefOut }>(caller, { type: 'getOrCreate', id: 'k-0' });
    const old = created['k-0'] as ObjectRefOut;
    expect(taken).toMatchObject({ id: 'k-0', kind: 'spot' });
    // Placed on any live object server (srv-stop is one too until the next test).
    expect(['srv-a', 'srv-b', 'srv-stop']).toContain(taken.rid);
    expect(taken.objectGeneration).toBeGreaterThan(old.objectGeneration);
    const host = alive.find((s) => s.name === taken.rid) as ChildApp;
    await settle([host]);
    expect(lines(host, 'object', 'k-0')).toMatchObject([
      { state: 'activated', gen: taken.objectGeneration, reason: 'tookOver' },
    ]);
    const again = await calls(caller, { tag: 'again', targets: ['k-0', 'k-1'], seqBase: perTarget + 1 });
    expect(again.find((r) => r.target === 'k-0')).toMatchObject({
      outcome: 'ok',
      rid: taken.rid,
      gen: taken.objectGeneration,
    });
    // The others stay as they were: only the explicit creation took one over.
    expect(again.find((r) => r.target === 'k-1')).toMatchObject({
      outcome: 'Unavailable',
      reason: 'ownerLeaseGone',
    });
  }, 120000);

  it('SIGSTOP past the lease, then SIGCONT: Rejected and no timers until the lease is refreshed, then it serves again; a Spot taken over meanwhile never runs there again', async () => {
    const spots = ['p-0', 'p-1', 'p-2'];
    const { refs } = await ask<{ refs: Record<string, ObjectRefOut> }>(caller, {
      type: 'create',
      ids: spots,
      node: 'srv-stop',
      init: { tickMs: 100 },
    });
    const warm = await calls(caller, { tag: 'p-warm', targets: spots, seqBase: 0 });
    expect(outcomes(warm)).toEqual({ ok: spots.length });
    await sleeper.waitLog((m) => m.e === 'tick' && m.id === 'p-1');

    sleeper.kill('SIGSTOP');
    // Past its lease: the caller and a survivor both see its descriptor gone.
    for (const app of [caller, survivors[0] as ChildApp]) await resolveUntil(app, 'p-1', leaseGone);
    const frozenAt = sleeper.logs.length;
    const during = await calls(caller, { tag: 'p-during', targets: spots, seqBase: 1 });
    expect(outcomes(during)).toEqual({ Unavailable: spots.length });
    // p-0 is taken over on srv-a meanwhile.
    const { result: taken } = await ask<{ result: ObjectRefOut }>(survivors[0] as ChildApp, {
      type: 'getOrCreate',
      id: 'p-0',
    });
    expect(taken).toMatchObject({ id: 'p-0', rid: 'srv-a' });
    expect(taken.objectGeneration).toBeGreaterThan((refs['p-0'] as ObjectRefOut).objectGeneration);

    // The store holds every command for a while, so the resumed owner cannot refresh its lease yet.
    await cluster.redis.pauseClients(3000);
    sleeper.kill('SIGCONT');
    const refused = await ask<{ refs: Record<string, { code?: string; reason?: string }> }>(sleeper, {
      type: 'create',
      ids: ['p-new'],
      node: 'srv-stop',
    });
    expect(refused.refs['p-new']).toMatchObject({ code: 'Rejected', reason: 'fenced' });

    // Then its refresh goes through: the lease is held again and it re-reads its Spots.
    const held = await sleeper.waitLog((m) => m.e === 'lease' && m.state === 'held', 15000, frozenAt);
    await sleeper.waitLog((m) => m.e === 'deactivate' && m.id === 'p-0', 15000, frozenAt);
    const resumed = sleeper.logs.slice(frozenAt);
    const heldAt = resumed.indexOf(held);
    expect(resumed.slice(0, heldAt).filter((m) => m.e === 'lease')).toEqual([
      { type: 'log', e: 'lease', state: 'fenced' },
    ]);
    // From SIGCONT to the refresh nothing of an object ran: no handler, no timer (timers due before
    // the fence deadline included: the lease is judged by the clock, not only by its fence timer).
    expect(resumed.slice(0, heldAt).filter((m) => m.e === 'enter' || m.e === 'tick')).toEqual([]);
    expect(lines(sleeper, 'deactivate', 'p-0').at(-1)).toMatchObject({ reason: 'takenOver' });

    // It serves its own Spots again once the caller sees its lease again (calls until then end Unavailable).
    const deadline = Date.now() + 20000;
    let served: CallResult[];
    for (let round = 0; ; round++) {
      served = await calls(caller, { tag: `p-again-${round}`, targets: ['p-1', 'p-2'], seqBase: 2 + round });
      if (served.every((r) => r.outcome === 'ok')) break;
      // Unavailable while the caller has not seen its lease again; Rejected while it is re-reading
      // its Spots after the refresh (admission stays shut until each is checked).
      for (const r of served) expect(['Unavailable', 'Rejected']).toContain(r.outcome);
      if (Date.now() > deadline) throw new Error(`srv-stop never served again: ${JSON.stringify(served)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const r of served)
      expect(r).toMatchObject({ rid: 'srv-stop', gen: refs[r.target]?.objectGeneration });
    // Its timers run again after the refresh.
    await sleeper.waitLog((m) => m.e === 'tick' && m.id === 'p-1', 5000, frozenAt + heldAt);
    const retry = await ask<{ refs: Record<string, ObjectRefOut> }>(sleeper, {
      type: 'create',
      ids: ['p-new'],
      node: 'srv-stop',
    });
    expect(retry.refs['p-new']).toMatchObject({ id: 'p-new', rid: 'srv-stop' });

    // p-0 runs on srv-a only: the old owner never ran a turn or a timer of it again.
    // The store pause fenced the survivors' leases too (no refresh lands for 3 s): srv-a refuses
    // (`Rejected`: it never ran) until its own lease is back and it has re-read its Spots.
    let p0: CallResult[];
    const p0Deadline = Date.now() + 10000;
    for (let round = 0; ; round++) {
      p0 = await calls(caller, { tag: `p0-${round}`, targets: ['p-0'], seqBase: 100 + round });
      if (p0[0]?.outcome !== 'Rejected') break;
      if (Date.now() > p0Deadline) throw new Error(`srv-a never served p-0: ${JSON.stringify(p0)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(p0).toMatchObject([{ outcome: 'ok', rid: 'srv-a', gen: taken.objectGeneration }]);
    await settle([sleeper, ...survivors]);
    const afterStop = sleeper.logs.slice(frozenAt);
    expect(afterStop.filter((m) => m.id === 'p-0' && (m.e === 'enter' || m.e === 'tick'))).toEqual([]);
    expect(turnReport([sleeper, ...survivors]).ranTwice).toEqual([]);
  }, 120000);
});
