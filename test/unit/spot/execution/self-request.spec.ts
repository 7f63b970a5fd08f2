import { describe, expect, it } from '@jest/globals';
import { JobQueue, ZLinkError } from '../../../../lib/core/index.js';
import { currentTurn, ObjectTurns, selfRequestRefusal } from '../../../../lib/spot/execution/index.js';
import { flush, gate, spot } from './turn-helpers.js';

/** docs/architecture.md#execution: no reentrancy — a request from an object to itself ends InvalidOperation at once, not in a deadlock. */

const jobs = new JobQueue(16);
const turnsOf = (id: string): ObjectTurns => new ObjectTurns({ key: spot(id), jobs, queueLimit: 16 });

describe('a request from an object to itself', () => {
  it('is refused InvalidOperation at once, while the asking turn still runs', async () => {
    const room = turnsOf('room-1');
    const seen = await room.submit(async () => {
      const inner = await room.submit(() => 'never').catch((e: unknown) => e);
      return { inner, stillBusy: room.busy, depth: room.depth };
    });
    expect(seen.inner).toBeInstanceOf(ZLinkError);
    expect(seen.inner).toMatchObject({
      code: 'InvalidOperation',
      details: { reason: 'selfRequest', id: 'room-1' },
    });
    expect([seen.stillBusy, seen.depth]).toEqual([true, 0]);
  });

  it('is refused through an await chain (timers, promise hops) too', async () => {
    const room = turnsOf('room-1');
    const deep = async (): Promise<unknown> => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await flush(2);
      return room.submit(() => 'never').catch((e: unknown) => e);
    };
    const inner = await room.submit(() => deep());
    expect(inner).toMatchObject({ code: 'InvalidOperation' });
  });

  it('A → B → A while A waits on B is refused the same way (an in-process cycle)', async () => {
    const a = turnsOf('room-a');
    const b = turnsOf('room-b');
    const result = await a.submit(() => b.submit(() => a.submit(() => 'never').catch((e: unknown) => e)));
    expect(result).toMatchObject({ code: 'InvalidOperation', details: { id: 'room-a' } });
  });

  it('a request to ANOTHER object from inside a turn works, and may run while the caller waits', async () => {
    const a = turnsOf('room-a');
    const b = turnsOf('room-b');
    const answer = await a.submit(async () => `a got ${await b.submit(() => 'b says hi')}`);
    expect(answer).toBe('a got b says hi');
  });

  it('a one-way submission to itself is accepted and runs as a later turn', async () => {
    const room = turnsOf('room-1');
    const order: string[] = [];
    let later: Promise<unknown> = Promise.resolve();
    await room.submit(() => {
      later = room.submit(() => order.push('later'), { oneWay: true });
      order.push('first');
    });
    await later;
    expect(order).toEqual(['first', 'later']);
  });

  it('code left running after its turn ended is no longer inside the turn: its submissions queue normally', async () => {
    const room = turnsOf('room-1');
    const g = gate();
    let detached: Promise<string> | undefined;
    await room.submit(() => {
      void g.opened.then(() => {
        detached = room.submit(() => 'queued normally');
      });
    });
    g.open();
    await flush();
    await expect(detached).resolves.toBe('queued normally');
  });

  it('selfRequestRefusal lets the call path refuse before resolving anything', async () => {
    const room = turnsOf('room-1');
    expect(selfRequestRefusal('request room.join', spot('room-1'))).toBeUndefined();
    expect(currentTurn()).toBeUndefined();
    const inside = await room.submit(() => ({
      self: selfRequestRefusal('request room.join', spot('room-1')),
      other: selfRequestRefusal('request room.join', spot('room-2')),
      otherMesh: selfRequestRefusal('request room.join', { ...spot('room-1'), mesh: 'other' }),
      turn: currentTurn()?.key,
    }));
    expect(inside.self).toMatchObject({ code: 'InvalidOperation' });
    expect(inside.self?.message).toContain(
      "request room.join: a request from spot 'room-1' on mesh 'game' to itself",
    );
    expect([inside.other, inside.otherMesh, inside.turn]).toEqual([undefined, undefined, spot('room-1')]);
  });
});
