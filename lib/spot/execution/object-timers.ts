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
  /** Saved with a persistent object's state (`{ durable: true }` when armed); absent otherwise. */
  readonly durable?: true;
}

/**
 * A durable timer as a persistent object's state row keeps it: by the wall clock, so it comes due at
 * the same moment wherever and whenever the object comes back. `anchorAt` is its first firing's time
 * (ms since the epoch): a timeout fires then, an interval then and every `intervalMs` after.
 */
export interface DurableTimer {
  readonly kind: 'timeout' | 'interval';
  readonly label: string;
  readonly anchorAt: number;
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
  /**
   * Why a durable timer labelled `label` cannot be armed (the object is not persistent, or `label` names
   * no method of it), or `undefined` when it can.
   */
  durableProblem?(label: string | undefined): string | undefined;
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
  /** Saved with the state (see `DurableTimer`); its first firing's wall-clock time. */
  readonly durable: boolean;
  anchorAt: number;
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
  setTimeout(callback: TimerCallback, ms: number, label?: string, options?: { durable?: boolean }): TimerId {
    const delay = checkDelay('timers.setTimeout', ms, 0);
    return this.add(
      'timeout',
      callback,
      delay,
      label,
      delay,
      this.durable('timers.setTimeout', label, options),
    );
  }

  /**
   * Runs `callback` every `ms` (a finite number ≥ 1, else `InvalidArgument`), each time as a turn of the
   * object, until `clear`ed or the object closes. The period is measured from each firing, not from the
   * end of its turn.
   */
  setInterval(callback: TimerCallback, ms: number, label?: string, options?: { durable?: boolean }): TimerId {
    const delay = checkDelay('timers.setInterval', ms, 1);
    return this.add(
      'interval',
      callback,
      delay,
      label,
      delay,
      this.durable('timers.setInterval', label, options),
    );
  }

  /** Whether `options` ask for a durable timer, checked: `InvalidArgument` when it cannot be one. */
  private durable(
    what: string,
    label: string | undefined,
    options: { durable?: boolean } | undefined,
  ): boolean {
    const durable = options?.durable;
    if (durable === undefined || durable === false) return false;
    if (durable !== true) throw invalidArgument(`${what} options.durable`, 'must be a boolean');
    const problem =
      this.host.durableProblem === undefined
        ? 'the object is not persistent (persist)'
        : this.host.durableProblem(label);
    if (problem !== undefined) throw invalidArgument(`${what} options.durable`, problem);
    return true;
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
    /** Durable (saved with the state), first firing at `anchorAt` (wall clock) unless given `dueInMs`. */
    durable?: { readonly anchorAt: number },
  ): TimerId {
    const ms = kind === 'interval' ? checkDelay('intervalMs', intervalMs as number, 1) : dueInMs;
    const id = this.add(kind, callback, ms, label, checkDelay('dueInMs', dueInMs, 0), durable !== undefined);
    const timer = this.timers.get(id);
    if (timer !== undefined && durable !== undefined) timer.anchorAt = durable.anchorAt;
    return id;
  }

  /**
   * The durable timers, in the order they were set (what a persistent object's state row keeps); once
   * closed, those live at the close.
   */
  durableTimers(): DurableTimer[] {
    if (this.closed) return this.atClose;
    const out: DurableTimer[] = [];
    for (const t of this.timers.values())
      if (t.durable)
        out.push({
          kind: t.kind,
          label: t.label as string,
          anchorAt: t.anchorAt,
          intervalMs: t.kind === 'interval' ? t.ms : undefined,
        });
    return out;
  }

  /** Whether any durable timer is live (skips building the list for an object with none). */
  get anyDurable(): boolean {
    if (this.closed) return this.atClose.length > 0;
    for (const t of this.timers.values()) if (t.durable) return true;
    return false;
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
    // What a stop or a passivation saves after the close: the durable timers that were live at it.
    if (!this.closed) this.atClose = this.durableTimers();
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer.handle);
    this.timers.clear();
  }

  private atClose: DurableTimer[] = [];

  private add(
    kind: Timer['kind'],
    callback: TimerCallback,
    ms: number,
    label: string | undefined,
    firstMs = ms,
    durable = false,
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
      durable,
      anchorAt: Date.now() + firstMs,
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
    ...(t.durable && { durable: true as const }),
  };
}

function checkDelay(what: string, ms: number, least: number): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < least)
    throw invalidArgument(what, `the delay must be a finite number of ms >= ${least} (got ${String(ms)})`);
  return ms;
}
