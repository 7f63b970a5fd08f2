import type { JobQueue } from '../../core/calls/index.js';
import type { ObjectKey } from '../../core/ports/index.js';
import type { TimerSnapshot } from './object-timers.js';

/** One unit of an object's work: a handler call, a lifecycle hook, a timer callback. */
export type Turn<T> = () => T | PromiseLike<T>;

export interface SubmitOptions<W> {
  /** Withdraws the turn while it waits (`Cancelled`); once it has started it runs to its end. */
  readonly signal?: AbortSignal;
  /**
   * Nobody awaits this turn (a one-way send): one from the object's own turn is accepted and runs as a
   * later turn, where a request would wait for itself and is refused `InvalidOperation`.
   */
  readonly oneWay?: boolean;
  /** What the turn carries (the message, its reply route), for capture on relocation: see `handOff()`. */
  readonly work?: W;
  /**
   * Accepted already, by this object on another node or before its seal (a move carried it): never
   * refused for the queue limit — it counted when it arrived.
   */
  readonly carried?: boolean;
}

/**
 * A turn with its own outcome, as one object (`ObjectTurns.submitJob`): a dispatcher that makes one per
 * call spares a closure per outcome and an options object. `resolve` or `reject` is called exactly once.
 */
export interface TurnJob<W> extends SubmitOptions<W> {
  run(): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface ObjectTurnsOptions {
  readonly key: ObjectKey;
  /** The runtime's one job queue: every turn holds one of its permits while it runs. */
  readonly jobs: JobQueue;
  /**
   * Turns that may wait to start (`objectQueueLimit`); one more is refused `Rejected`. A timer firing is
   * never refused (nobody could be told): each timer holds at most one slot, so timers overshoot the
   * limit by at most their number.
   */
  readonly queueLimit: number;
  /**
   * True while the owner lease is fenced (docs/protocol.md#owner-lease-and-fencing): no new turns, no timer
   * firings, and no queued turn starts (the queue is held, as when sealed) until `fenceLifted()`.
   */
  readonly fenced?: () => boolean;
  /** A timer callback's failure: nobody awaits a timer, so it is reported here. @default ignored */
  readonly onTimerError?: (error: unknown, timer: TimerSnapshot) => void;
}

/** `open` runs turns; `sealed` starts none and keeps its queue (relocation); `closed` is for good. */
export type TurnsState = 'open' | 'sealed' | 'closed';

/** How a deactivation ends the turns still waiting; both mean "it never ran". */
export type ClosingCode = 'Unavailable' | 'Shutdown';
