import { invalidArgument } from '../../core/errors.js';
import { runOutsideTurns } from './turn-context.js';

/** Identifies one timer of one object; ids are never reused within an activation. */
export type TimerId = number;

/** A timer's callback: it runs as a turn of the object, so it may await and never overlaps a handler. */
export type TimerCallback = () => void | PromiseLike<void>;

/** What a timer is at one moment, for capture on relocation (the callback itself does not travel). */
export interface TimerSnapshot {
  readonly id: TimerId;
  readonly kind: 'timeout' | 'interval';
  /** The name given when it was set, so a `restore` can tell which callback to set again. */
  readonly label: string | undefined;
  /** Until its next firing; 0 for one that is due (queued as a turn, or held while fenced or sealed). */
  readonly dueInMs: number;
  /** For an interval, its period. */
  readonly intervalMs: number | undefined;
}

/** What the timers need from the object's turn queue. */
export interface TimerHost {
  /** Whether a firing may start a turn now: the object is open and its owner lease not fenced. */
  canStartTimers(): boolean;
  /**
   * Queues `run` as a turn of the object, never refused for the queue limit; `failed` is called with
   * what the turn threw, if it threw. A turn dropped unstarted (the object closed) calls nothing.
   */
  enqueueTimerTurn(run: () => unknown, failed: (error: unknown) => void): void;
}

interface Timer {
  readonly id: TimerId;
  readonly kind: 'timeout' | 'interval';
  readonly ms: number;
  readonly label: string | undefined;
  readonly callback: TimerCallback;
  handle: ReturnType<typeof setTimeout> | undefined;
  dueAt: number;
  /** Came due while no turn could start (fenced, sealed); fires on `resume()`. */
  held: boolean;
  /** Its turn is in the object's queue; a further firing of an interval meanwhile is coalesced into it. */
  queued: boolean;
}

/**
 * `ctx.timers` of one object activation (docs/architecture.md#public-surface): `setTimeout` / `setInterval`
 * whose callbacks are submitted as turns of the object, so a timer never runs beside a handler. A timer that
 * comes due while the owner lease is fenced or the object is sealed starts nothing
 * (docs/protocol.md#owner-lease-and-fencing: no timer starts while fenced) and fires once the object may run
 * turns again. An interval whose previous firing is still waiting in the queue skips the firing rather than
 * piling turns up: one interval holds at most one queue slot.
 */
export class ObjectTimers {
  private readonly timers = new Map<TimerId, Timer>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly host: TimerHost,
    /** Where a timer callback's failure goes: nobody awaits a timer. */
    private readonly onError: (error: unknown, timer: TimerSnapshot) => void = () => undefined,
  ) {}

  /**
   * Runs `callback` once, as a turn of the object, `ms` from now (or later, behind the turns queued
   * before it). `ms` is a finite number ≥ 0, else `InvalidArgument` (thrown). After the object closed it
   * arms nothing and returns an id that `clear` ignores.
   */
  setTimeout(callback: TimerCallback, ms: number, label?: string): TimerId {
    return this.add('timeout', callback, checkDelay('timers.setTimeout', ms, 0), label);
  }

  /**
   * Runs `callback` every `ms` (a finite number ≥ 1, else `InvalidArgument`), each time as a turn of the
   * object, until `clear`ed or the object closes. The period is measured from each firing, not from the
   * end of its turn.
   */
  setInterval(callback: TimerCallback, ms: number, label?: string): TimerId {
    return this.add('interval', callback, checkDelay('timers.setInterval', ms, 1), label);
  }

  /**
   * Sets again a timer that moved with its object (relocation): its first firing after `dueInMs`, an
   * interval's later ones every `intervalMs`, as it would have fired on the node it left.
   */
  restore(
    kind: 'timeout' | 'interval',
    callback: TimerCallback,
    dueInMs: number,
    intervalMs: number | undefined,
    label: string | undefined,
  ): TimerId {
    const ms = kind === 'interval' ? checkDelay('intervalMs', intervalMs as number, 1) : dueInMs;
    return this.add(kind, callback, ms, label, checkDelay('dueInMs', dueInMs, 0));
  }

  /** Stops the timer; a firing of it already queued as a turn does not run. Unknown ids are ignored. */
  clear(id: TimerId): void {
    const timer = this.timers.get(id);
    if (!timer) return;
    clearTimeout(timer.handle);
    this.timers.delete(id);
  }

  /** How many timers are live (armed and not cleared). */
  get size(): number {
    return this.timers.size;
  }

  /** The live timers in the order they were set, for capture on relocation. */
  pending(): TimerSnapshot[] {
    const now = Date.now();
    return [...this.timers.values()].map((t) => snapshot(t, now));
  }

  /** Fires the timers that came due while no turn could start. Called when the object may run turns again. */
  resume(): void {
    for (const timer of [...this.timers.values()]) {
      if (!timer.held) continue;
      timer.held = false;
      this.fire(timer);
    }
  }

  /** Clears every timer, for good: a closed object arms none again. */
  closeAll(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer.handle);
    this.timers.clear();
  }

  private add(
    kind: Timer['kind'],
    callback: TimerCallback,
    ms: number,
    label: string | undefined,
    firstMs = ms,
  ): TimerId {
    const id = this.nextId++;
    if (this.closed) return id;
    const timer: Timer = {
      id,
      kind,
      ms,
      label,
      callback,
      handle: undefined,
      dueAt: 0,
      held: false,
      queued: false,
    };
    this.timers.set(id, timer);
    this.arm(timer, firstMs);
    return id;
  }

  private arm(timer: Timer, ms = timer.ms): void {
    timer.dueAt = Date.now() + ms;
    // Armed outside the turn that set it: the firing belongs to the object, not to that turn's caller.
    timer.handle = runOutsideTurns(() => setTimeout(() => this.due(timer), ms));
  }

  private due(timer: Timer): void {
    timer.handle = undefined;
    if (timer.kind === 'interval') this.arm(timer);
    this.fire(timer);
  }

  private fire(timer: Timer): void {
    if (this.timers.get(timer.id) !== timer || timer.queued) return;
    if (!this.host.canStartTimers()) {
      timer.held = true;
      return;
    }
    timer.queued = true;
    this.host.enqueueTimerTurn(
      () => {
        timer.queued = false;
        if (this.timers.get(timer.id) !== timer) return undefined; // cleared while its turn waited
        if (timer.kind === 'timeout') this.timers.delete(timer.id);
        return timer.callback();
      },
      (error) => this.onError(error, snapshot(timer, Date.now())),
    );
  }
}

function snapshot(t: Timer, now: number): TimerSnapshot {
  const due = t.held || t.queued || t.handle === undefined;
  return {
    id: t.id,
    kind: t.kind,
    label: t.label,
    dueInMs: due ? 0 : Math.max(0, t.dueAt - now),
    intervalMs: t.kind === 'interval' ? t.ms : undefined,
  };
}

function checkDelay(what: string, ms: number, least: number): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < least)
    throw invalidArgument(what, `the delay must be a finite number of ms >= ${least} (got ${String(ms)})`);
  return ms;
}
