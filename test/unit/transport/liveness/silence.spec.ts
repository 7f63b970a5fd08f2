import { PING_INTERVAL_MS } from '../../../../lib/transport/timing.js';
/** The one silence rule (`SilenceClock`): time a process did not read is not held against its peer. */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { SilenceClock, heardBy } from '../../../../lib/transport/liveness/silence.js';

afterEach(() => {
  jest.useRealTimers();
});

describe('SilenceClock', () => {
  it('a tick on time credits nothing; a tick more than 1 s late credits its lateness (the process was stopped)', () => {
    jest.useFakeTimers({ now: 10000 });
    const clock = new SilenceClock();
    expect(clock.credit(10000 + PING_INTERVAL_MS + 200)).toBe(0);
    expect(clock.credit(11200 + PING_INTERVAL_MS + 5000)).toBe(5000);
  });

  it('time the receive loop waited for a job permit is credited, up to the time since the last tick', async () => {
    jest.useFakeTimers({ now: 0 });
    const clock = new SilenceClock();
    let release!: () => void;
    const waiting = clock.unread.during(new Promise<void>((r) => (release = r)));
    jest.setSystemTime(700);
    release();
    await waiting;
    jest.setSystemTime(PING_INTERVAL_MS);
    expect(clock.credit(PING_INTERVAL_MS)).toBe(700);
    // A wait still going on at a tick counts up to that tick, and from there on.
    jest.setSystemTime(1600);
    void clock.unread.during(new Promise<void>(() => undefined));
    jest.setSystemTime(2 * PING_INTERVAL_MS);
    expect(clock.credit(2 * PING_INTERVAL_MS)).toBe(400);
    jest.setSystemTime(3 * PING_INTERVAL_MS);
    expect(clock.credit(3 * PING_INTERVAL_MS)).toBe(PING_INTERVAL_MS);
  });

  it('heardBy moves the last-heard time forward by the credit, never past now', () => {
    expect(heardBy(1000, 500, 5000)).toBe(1500);
    expect(heardBy(4800, 500, 5000)).toBe(5000);
  });
});
