import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { JobQueue } from '../../../../lib/core/index.js';
import { ObjectTurns, type TimerSnapshot } from '../../../../lib/spot/execution/index.js';
import { gate, spot } from './turn-helpers.js';

/** docs/architecture.md#execution: `ctx.timers` callbacks run as turns of the object; docs/protocol.md#owner-lease-and-fencing: no timer starts while fenced. */

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

function turnsWith(
  fenced: () => boolean = () => false,
  onTimerError?: (e: unknown, t: TimerSnapshot) => void,
) {
  return new ObjectTurns({ key: spot('room-1'), jobs: new JobQueue(4), queueLimit: 8, fenced, onTimerError });
}

describe('ctx.timers', () => {
  it('a timeout runs once, as a turn: never beside a running handler turn', async () => {
    const turns = turnsWith();
    const g = gate();
    const log: string[] = [];
    let inside = 0;
    const handler = turns.submit(async () => {
      inside++;
      log.push('handler start');
      await g.opened;
      log.push('handler end');
      inside--;
    });
    turns.timers.setTimeout(() => {
      log.push(`timer (handlers inside: ${inside})`);
    }, 10);
    await jest.advanceTimersByTimeAsync(50);
    expect(log).toEqual(['handler start']); // due, but waiting for its turn
    expect(turns.timers.pending()).toEqual([
      { id: 1, kind: 'timeout', label: undefined, dueInMs: 0, intervalMs: undefined },
    ]);
    g.open();
    await handler;
    await jest.advanceTimersByTimeAsync(0);
    expect(log).toEqual(['handler start', 'handler end', 'timer (handlers inside: 0)']);
    await jest.advanceTimersByTimeAsync(100);
    expect(log).toHaveLength(3);
    expect(turns.timers.pending()).toEqual([]);
  });

  it('an interval fires each period until cleared; a firing still queued is coalesced, not piled up', async () => {
    const turns = turnsWith();
    let ticks = 0;
    const id = turns.timers.setInterval(() => {
      ticks++;
    }, 10);
    await jest.advanceTimersByTimeAsync(35);
    expect(ticks).toBe(3);
    const g = gate();
    const slow = turns.submit(() => g.opened);
    await jest.advanceTimersByTimeAsync(100); // ten periods while the object is busy
    expect(turns.depth).toBe(1); // one firing waits, not ten
    g.open();
    await slow;
    await jest.advanceTimersByTimeAsync(0);
    expect(ticks).toBe(4);
    turns.timers.clear(id);
    await jest.advanceTimersByTimeAsync(100);
    expect(ticks).toBe(4);
  });

  it('a timer cleared while its firing waits in the queue does not run', async () => {
    const turns = turnsWith();
    const g = gate();
    const busy = turns.submit(() => g.opened);
    let ran = false;
    const id = turns.timers.setTimeout(() => {
      ran = true;
    }, 5);
    await jest.advanceTimersByTimeAsync(10);
    turns.timers.clear(id);
    g.open();
    await busy;
    await jest.advanceTimersByTimeAsync(10);
    expect(ran).toBe(false);
  });

  it('close cancels every timer, armed or queued, and arms none afterwards', async () => {
    const turns = turnsWith();
    const g = gate();
    const busy = turns.submit(() => g.opened);
    let runs = 0;
    turns.timers.setTimeout(() => void runs++, 5); // will be queued behind the busy turn
    turns.timers.setInterval(() => void runs++, 1000); // still armed
    await jest.advanceTimersByTimeAsync(10);
    const closed = turns.close('destroyed');
    g.open();
    await busy;
    await closed;
    turns.timers.setTimeout(() => void runs++, 1);
    await jest.advanceTimersByTimeAsync(5000);
    expect(runs).toBe(0);
    expect(turns.timers.pending()).toEqual([]);
  });

  it('while fenced a due timer starts nothing; it fires once the lease is refreshed', async () => {
    let fenced = false;
    const turns = turnsWith(() => fenced);
    let runs = 0;
    turns.timers.setTimeout(() => void runs++, 10, 'respawn');
    fenced = true;
    await jest.advanceTimersByTimeAsync(50);
    expect(runs).toBe(0);
    expect(turns.timers.pending()).toEqual([
      { id: 1, kind: 'timeout', label: 'respawn', dueInMs: 0, intervalMs: undefined },
    ]);
    fenced = false;
    turns.fenceLifted();
    await jest.advanceTimersByTimeAsync(0);
    expect(runs).toBe(1);
  });

  it('a firing queued before the fence does not start while fenced; it runs once the fence is lifted', async () => {
    let fenced = false;
    const turns = turnsWith(() => fenced);
    const g = gate();
    const handler = turns.submit(() => g.opened);
    let runs = 0;
    turns.timers.setTimeout(() => void runs++, 10);
    await jest.advanceTimersByTimeAsync(20);
    expect(turns.depth).toBe(1); // due and queued behind the handler
    fenced = true;
    g.open();
    await handler;
    await jest.advanceTimersByTimeAsync(50);
    expect(runs).toBe(0);
    fenced = false;
    turns.fenceLifted();
    await jest.advanceTimersByTimeAsync(0);
    expect(runs).toBe(1);
  });

  it('a sealed object holds due timers and lists them for capture; unseal fires them', async () => {
    const turns = turnsWith();
    let runs = 0;
    turns.timers.setTimeout(() => void runs++, 10, 'a');
    turns.timers.setInterval(() => void runs++, 100, 'b');
    await jest.advanceTimersByTimeAsync(5);
    await turns.seal();
    expect(turns.timers.pending()).toEqual([
      { id: 1, kind: 'timeout', label: 'a', dueInMs: 5, intervalMs: undefined },
      { id: 2, kind: 'interval', label: 'b', dueInMs: 95, intervalMs: 100 },
    ]);
    await jest.advanceTimersByTimeAsync(20);
    expect(runs).toBe(0);
    turns.unseal();
    await jest.advanceTimersByTimeAsync(0);
    expect(runs).toBe(1);
  });

  it("a timer callback's failure goes to onTimerError; the queue keeps running", async () => {
    const failures: [unknown, TimerSnapshot][] = [];
    const turns = turnsWith(undefined, (e, t) => failures.push([e, t]));
    const boom = new Error('boom');
    turns.timers.setTimeout(() => Promise.reject(boom), 1, 'bad');
    await jest.advanceTimersByTimeAsync(5);
    expect(failures).toEqual([[boom, expect.objectContaining({ label: 'bad', kind: 'timeout' })]]);
    await expect(turns.submit(() => 'still fine')).resolves.toBe('still fine');
  });

  it('a bad delay is InvalidArgument', () => {
    const turns = turnsWith();
    expect(() => turns.timers.setTimeout(() => undefined, -1)).toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    );
    expect(() => turns.timers.setInterval(() => undefined, 0)).toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    );
    expect(() => turns.timers.setTimeout(() => undefined, Number.NaN)).toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    );
  });
});
