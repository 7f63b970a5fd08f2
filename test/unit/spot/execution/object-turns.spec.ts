import { describe, expect, it } from '@jest/globals';
import { JobQueue, ZLinkError } from '../../../../lib/core/index.js';
import { isHandedOff, ObjectTurns } from '../../../../lib/spot/execution/index.js';
import { flush, gate, spot, track } from './turn-helpers.js';

/** docs/architecture.md#execution: one turn at a time per object, admitted through the runtime's one job queue. */

function turnsOf(id: string, jobs = new JobQueue(64), queueLimit = 1024): ObjectTurns<string> {
  return new ObjectTurns<string>({ key: spot(id), jobs, queueLimit });
}

describe('ObjectTurns: one turn at a time, in order', () => {
  it('turns that await never overlap on one object, and run in the order submitted', async () => {
    const turns = turnsOf('room-1');
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    const done = Array.from({ length: 6 }, (_, i) =>
      turns.submit(async () => {
        inside++;
        most = Math.max(most, inside);
        await new Promise((resolve) => setImmediate(resolve));
        await flush(3);
        order.push(i);
        inside--;
        return i * 10;
      }),
    );
    expect(await Promise.all(done)).toEqual([0, 10, 20, 30, 40, 50]);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(1);
  });

  it('N objects sharing a JobQueue of capacity k: at most k turns run at once across them', async () => {
    const jobs = new JobQueue(2);
    const objects = Array.from({ length: 5 }, (_, i) => turnsOf(`room-${i}`, jobs));
    const gates = Array.from({ length: 15 }, () => gate());
    let inside = 0;
    let most = 0;
    const done = gates.map((g, n) =>
      objects[n % 5].submit(async () => {
        inside++;
        most = Math.max(most, inside);
        await g.opened;
        inside--;
      }),
    );
    await flush();
    expect(inside).toBe(2);
    expect(jobs.active).toBe(2);
    for (const g of gates) {
      g.open();
      await flush();
      expect(inside).toBeLessThanOrEqual(2);
    }
    await Promise.all(done);
    expect(most).toBe(2);
    expect(jobs.active).toBe(0);
  });

  it('a permit is released when a turn throws or rejects, and the next turn runs', async () => {
    const jobs = new JobQueue(1);
    const turns = turnsOf('room-1', jobs);
    const boom = new Error('boom');
    await expect(
      turns.submit(() => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(jobs.active).toBe(0);
    await expect(
      turns.submit(() => Promise.reject(new ZLinkError('NotFound', 'nope'))),
    ).rejects.toMatchObject({
      code: 'NotFound',
    });
    expect(jobs.active).toBe(0);
    await expect(turns.submit(() => 'next')).resolves.toBe('next');
    expect(jobs.active).toBe(0);
  });

  it('a turn waiting for a permit waits; the object is not busy meanwhile', async () => {
    const jobs = new JobQueue(1);
    expect(jobs.tryAcquire()).toBe(true); // someone else holds the only permit
    const turns = turnsOf('room-1', jobs);
    const run = track(turns.submit(() => 'ran'));
    await flush();
    expect([run.settled, turns.busy, turns.depth]).toEqual([0, false, 1]);
    jobs.release();
    await flush();
    expect(run.value).toBe('ran');
    expect(jobs.active).toBe(0);
  });
});

describe('ObjectTurns: permits are never lost', () => {
  it('close while the head waits for a permit: the wait is aborted and no permit is lost', async () => {
    const jobs = new JobQueue(1);
    expect(jobs.tryAcquire()).toBe(true);
    const a = turnsOf('room-a', jobs);
    let ran = false;
    const waiting = track(a.submit(() => (ran = true)));
    await flush();
    await a.close('destroyed');
    await flush();
    expect((waiting.error as ZLinkError).code).toBe('Unavailable');
    jobs.release();
    expect(jobs.active).toBe(0);
    const b = turnsOf('room-b', jobs);
    await expect(b.submit(() => 'b ran')).resolves.toBe('b ran');
    expect([ran, jobs.active]).toEqual([false, 0]);
  });

  it('the grant and a close in the same tick: the granted permit goes straight back', async () => {
    const jobs = new JobQueue(1);
    expect(jobs.tryAcquire()).toBe(true);
    const a = turnsOf('room-a', jobs);
    const waiting = track(a.submit(() => 'never'));
    await flush();
    jobs.release(); // hands the permit to the object's waiter synchronously...
    const closed = a.close('moved'); // ...and the object closes before that grant is seen
    await closed;
    await flush();
    expect((waiting.error as ZLinkError).code).toBe('Unavailable');
    expect(jobs.active).toBe(0);
  });

  it("the caller's signal withdraws a waiting turn: Cancelled, never run, no permit lost", async () => {
    const jobs = new JobQueue(1);
    expect(jobs.tryAcquire()).toBe(true);
    const turns = turnsOf('room-1', jobs);
    const head = new AbortController();
    const second = new AbortController();
    let ran = 0;
    const first = track(turns.submit(() => ran++, { signal: head.signal }));
    const next = track(turns.submit(() => ran++, { signal: second.signal }));
    const third = track(turns.submit(() => 'third'));
    await flush();
    head.abort(new Error('user gave up')); // the head, waiting for the permit
    second.abort(); // one behind it in the object queue
    await flush();
    expect((first.error as ZLinkError).code).toBe('Cancelled');
    expect((next.error as ZLinkError).code).toBe('Cancelled');
    expect(turns.depth).toBe(1);
    jobs.release();
    await flush();
    expect([third.value, ran, jobs.active]).toEqual(['third', 0, 0]);
    await expect(turns.submit(() => 1, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'Cancelled',
    });
  });
});

describe('ObjectTurns: the bounded queue', () => {
  it('a full queue refuses with Rejected at once; nothing is queued and the queue is unchanged', async () => {
    const turns = turnsOf('room-1', new JobQueue(8), 2);
    const g = gate();
    const ran: string[] = [];
    const running = turns.submit(async () => {
      await g.opened;
      ran.push('running');
    });
    await flush();
    const queued = [turns.submit(() => ran.push('q1')), turns.submit(() => ran.push('q2'))];
    expect(turns.depth).toBe(2);
    const refused = await turns.submit(() => ran.push('refused')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ZLinkError);
    expect(refused).toMatchObject({ code: 'Rejected', details: { reason: 'queueFull', limit: 2 } });
    expect(turns.depth).toBe(2);
    g.open();
    await Promise.all([running, ...queued]);
    expect(ran).toEqual(['running', 'q1', 'q2']);
    await expect(turns.submit(() => 'room again')).resolves.toBe('room again');
  });
});

describe('ObjectTurns: close (deactivation)', () => {
  it('queued turns end with Unavailable exactly once each; the running one finishes; close waits for it', async () => {
    const turns = turnsOf('room-1');
    const g = gate();
    const bodies: string[] = [];
    const running = track(
      turns.submit(async () => {
        await g.opened;
        bodies.push('running');
        return 'finished';
      }),
    );
    await flush();
    const queued = [1, 2, 3].map((n) => track(turns.submit(() => bodies.push(`q${n}`))));
    const closed = track(turns.close('destroyed'));
    await flush();
    for (const q of queued) {
      expect(q.settled).toBe(1);
      expect(q.error).toMatchObject({ code: 'Unavailable', details: { reason: 'destroyed' } });
    }
    expect([closed.settled, running.settled]).toEqual([0, 0]);
    g.open();
    await flush();
    expect([running.value, closed.settled]).toEqual(['finished', 1]);
    expect(bodies).toEqual(['running']);
    expect(turns.state).toBe('closed');
    await expect(turns.submit(() => 'late')).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'destroyed' },
    });
    await turns.close('again'); // idempotent, keeps the first reason
    await expect(turns.submit(() => 'late')).rejects.toMatchObject({ details: { reason: 'destroyed' } });
  });

  it('a runtime shutdown may close with Shutdown', async () => {
    const turns = turnsOf('room-1');
    const g = gate();
    const running = turns.submit(() => g.opened);
    await flush(); // started: a close lets it finish
    const queued = track(turns.submit(() => 'never'));
    const closed = turns.close('runtime closing', 'Shutdown');
    g.open();
    await Promise.all([running, closed]);
    expect(queued.error).toMatchObject({ code: 'Shutdown' });
  });
});

describe('ObjectTurns: seal (the relocation seam)', () => {
  it('seal resolves after the current turn; the queue is kept in order; unseal resumes', async () => {
    const turns = turnsOf('room-1');
    const g = gate();
    const ran: string[] = [];
    const first = turns.submit(async () => {
      await g.opened;
      ran.push('first');
    });
    await flush();
    const rest = ['a', 'b', 'c'].map((w) => turns.submit(() => ran.push(w), { work: w }));
    const sealed = track(turns.seal());
    await flush();
    expect(sealed.settled).toBe(0);
    g.open();
    await first;
    await flush();
    expect(sealed.settled).toBe(1);
    expect([turns.state, turns.queuedWork(), ran]).toEqual(['sealed', ['a', 'b', 'c'], ['first']]);
    await expect(turns.submit(() => 'x')).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'sealed' },
    });
    turns.unseal();
    await Promise.all(rest);
    expect(ran).toEqual(['first', 'a', 'b', 'c']);
  });

  it('handOff takes the waiting work in order; their local ends are marked handed off', async () => {
    const jobs = new JobQueue(1);
    expect(jobs.tryAcquire()).toBe(true); // the head is waiting for a permit when the seal comes
    const turns = turnsOf('room-1', jobs);
    const waiting = ['m1', 'm2'].map((w) => track(turns.submit(() => w, { work: w })));
    await flush();
    await turns.seal();
    jobs.release();
    expect(jobs.active).toBe(0);
    expect(turns.handOff()).toEqual(['m1', 'm2']);
    await flush();
    for (const w of waiting) expect(isHandedOff(w.error)).toBe(true);
    expect(turns.depth).toBe(0);
    await turns.close('relocated');
    expect(isHandedOff(new ZLinkError('Unavailable', 'x'))).toBe(false);
  });
});

describe('ObjectTurns: owner fencing', () => {
  it('while fenced new turns are refused Rejected and queued ones wait; they run in order once unfenced', async () => {
    let fenced = false;
    const jobs = new JobQueue(4);
    const turns = new ObjectTurns({ key: spot('room-1'), jobs, queueLimit: 8, fenced: () => fenced });
    const g = gate();
    const running = turns.submit(() => g.opened);
    const order: string[] = [];
    const queued = ['q1', 'q2'].map((w) =>
      track(
        turns.submit(() => {
          order.push(w);
          return w;
        }),
      ),
    );
    await flush();
    expect(turns.busy).toBe(true);
    fenced = true;
    await expect(turns.submit(() => 'new')).rejects.toMatchObject({
      code: 'Rejected',
      details: { reason: 'fenced' },
    });
    g.open();
    await running;
    await flush();
    // The running turn ended; what was queued before the fence holds, with no permit taken.
    expect(order).toEqual([]);
    expect(queued.map((q) => q.settled)).toEqual([0, 0]);
    expect(turns.depth).toBe(2);
    expect(jobs.active).toBe(0);
    turns.fenceLifted(); // still fenced: nothing starts
    await flush();
    expect(order).toEqual([]);
    fenced = false;
    turns.fenceLifted();
    await flush();
    expect(order).toEqual(['q1', 'q2']);
    expect(queued.map((q) => q.value)).toEqual(['q1', 'q2']);
    await expect(turns.submit(() => 'after refresh')).resolves.toBe('after refresh');
  });

  it('a permit granted after the fence came down goes straight back; the head keeps its place', async () => {
    let fenced = false;
    const jobs = new JobQueue(1);
    const turns = new ObjectTurns({ key: spot('room-1'), jobs, queueLimit: 8, fenced: () => fenced });
    await jobs.acquire(); // another object's turn holds the only permit: the head waits for it
    const head = track(turns.submit(() => 'head'));
    await flush();
    fenced = true;
    jobs.release();
    await flush();
    expect(head.settled).toBe(0);
    expect(turns.depth).toBe(1);
    expect(jobs.active).toBe(0);
    fenced = false;
    turns.fenceLifted();
    await flush();
    expect(head.value).toBe('head');
    expect(jobs.active).toBe(0);
  });

  it('turns held by the fence end with the close code when the object is deactivated (taken over)', async () => {
    let fenced = false;
    const turns = new ObjectTurns({
      key: spot('room-1'),
      jobs: new JobQueue(4),
      queueLimit: 8,
      fenced: () => fenced,
    });
    const g = gate();
    const running = turns.submit(() => g.opened);
    let ran = false;
    const held = track(turns.submit(() => void (ran = true)));
    await flush();
    fenced = true;
    g.open();
    await running;
    await turns.close('takenOver');
    await flush();
    expect(ran).toBe(false);
    expect(held.error).toMatchObject({ code: 'Unavailable', details: { reason: 'takenOver' } });
  });
});
