import { PING_INTERVAL_MS, STALL_MS } from '../timing.js';

/**
 * The time a receive loop read nothing while its process ran: it waited for a job permit (every
 * handler busy and the waiting list full — backpressure). What the peers sent meanwhile is still
 * unread, their pings included, so a liveness check must not hold that time against them.
 */
export class UnreadTime {
  private since: number | undefined;
  private total = 0;

  /** Waits for `permit`; the time counts as unread. */
  async during(permit: Promise<void>): Promise<void> {
    this.since = Date.now();
    try {
      await permit;
    } finally {
      this.total += Date.now() - (this.since ?? Date.now());
      this.since = undefined;
    }
  }

  /** The unread time since the last `take` (a wait still going on counts up to `now`). */
  take(now: number): number {
    let total = this.total;
    this.total = 0;
    if (this.since !== undefined) {
      total += now - this.since;
      this.since = now;
    }
    return total;
  }
}

/**
 * The one rule for judging silence fairly: what a peer sent while this process did not read is
 * still unread, its pings included, so that time is not held against it. That is the time a receive
 * loop waited for a job permit (`unread`) and the lateness of a tick that came too late (the process
 * was stopped, paused, or blocked: timers run before I/O).
 */
export class SilenceClock {
  /** Time the receive loop waited for job permits, reading nothing. */
  readonly unread = new UnreadTime();
  private lastTick = Date.now();

  /** At a tick: how much of the time since the previous tick is not held against anyone. */
  credit(now: number): number {
    const late = now - this.lastTick - PING_INTERVAL_MS;
    const credit = Math.min(now - this.lastTick, this.unread.take(now) + (late > STALL_MS ? late : 0));
    this.lastTick = now;
    return credit;
  }

  /** Restarts the count (a timer that starts now, after a pause of its own). */
  reset(now: number): void {
    this.lastTick = now;
    this.unread.take(now);
  }
}

/** `lastHeard` moved forward by `credit` (never past `now`): when the peer last counts as heard from. */
export function heardBy(lastHeard: number, credit: number, now: number): number {
  return Math.min(now, lastHeard + credit);
}
