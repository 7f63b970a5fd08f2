import { ZLinkError, cancelledError } from '../../core/errors.js';
import { type JobQueue, isThenable } from '../../core/calls/index.js';
import type { ObjectKey } from '../../core/ports/index.js';
import { ObjectTimers } from './object-timers.js';
import {
  type TurnContext,
  currentTurn,
  describeObject,
  runInTurn,
  selfSubmitRefusal,
} from './turn-context.js';
import { admissionRefusal, closedRefusal, refusedTurn, settle } from './turn-outcomes.js';
import type {
  ClosingCode,
  ObjectTurnsOptions,
  SubmitOptions,
  Turn,
  TurnJob,
  TurnsState,
} from './turn-options.js';

export type * from './turn-options.js';

interface Entry<W> {
  readonly job: TurnJob<W>;
  readonly awaitedBy: TurnContext | undefined;
  /** A timer firing: dropped without a word when the object closes (its timer is gone too). */
  readonly timer: boolean;
  onAbort?: () => void;
}

/** `submitThen`'s turn and outcomes as one job. */
class ThenJob<W> implements TurnJob<W> {
  readonly signal: AbortSignal | undefined;
  readonly oneWay: boolean | undefined;
  readonly work: W | undefined;
  readonly carried: boolean | undefined;

  constructor(
    readonly run: () => unknown,
    options: SubmitOptions<W>,
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: unknown) => void,
  ) {
    this.signal = options.signal;
    this.oneWay = options.oneWay;
    this.work = options.work;
    this.carried = options.carried;
  }
}

/**
 * The turn queue of one object activation (docs/architecture.md#execution): turns run strictly one at a time,
 * in the order they were accepted, each holding a permit of the runtime's job queue while it runs
 * (released on every path, a throw included). The queue is bounded: a submission that finds it full
 * is refused at once, never queued and never dropped later. Nothing here retries or resubmits.
 */
export class ObjectTurns<W = unknown> {
  readonly key: ObjectKey;
  /** `ctx.timers` of this activation: their callbacks run as turns of this queue. */
  readonly timers: ObjectTimers;
  private readonly jobs: JobQueue;
  /** How many turns may wait (`objectQueueLimit`). */
  readonly queueLimit: number;
  private readonly fenced: () => boolean;
  private readonly queue: Entry<W>[] = [];
  private current: TurnContext | undefined;
  /** The head's wait for a job permit; aborting it hands no permit out and loses none. */
  private admission: AbortController | undefined;
  private phase: TurnsState = 'open';
  private closing: { reason: string; code: ClosingCode } | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(options: ObjectTurnsOptions) {
    this.key = options.key;
    this.jobs = options.jobs;
    this.queueLimit = options.queueLimit;
    this.fenced = options.fenced ?? (() => false);
    this.timers = new ObjectTimers(
      {
        canStartTimers: () => this.phase === 'open' && !this.fenced(),
        enqueueTimerTurn: (run, failed) => this.enqueueTimerTurn(run, failed),
        durableProblem: (label) =>
          this.durableTimers === undefined
            ? 'the object is not persistent (persist)'
            : this.durableTimers(label),
      },
      options.onTimerError,
    );
  }

  get state(): TurnsState {
    return this.phase;
  }

  /** Turns accepted and not yet started (the running one excluded). */
  get depth(): number {
    return this.queue.length;
  }

  private ran = 0;
  /** How many turns have ended: an idle sweep tells from it whether any ran since it last looked. */
  get turnsRun(): number {
    return this.ran;
  }
  /** Whether a turn is running now. */
  get busy(): boolean {
    return this.current !== undefined;
  }

  /**
   * Queues `turn`; it runs after every turn accepted before it, alone, holding a job permit. Resolves
   * with what the turn returns and rejects with what it throws. Refused at once, with nothing queued:
   * `Unavailable` once the object closed (`details.reason` the close reason) or while it is sealed for
   * relocation (`details.reason: 'sealed'`); `InvalidOperation` for a request from this object's own
   * turn, or from a turn it awaits; `Cancelled` for an already aborted signal; `Rejected` while the owner
   * lease is fenced (`details.reason: 'fenced'`) or when `queueLimit` turns already wait
   * (`details.reason: 'queueFull'`). A turn accepted before a fence waits until `fenceLifted()`; one
   * still waiting when the object closes ends with the close code; one withdrawn by its signal ends
   * `Cancelled`. It never runs a turn twice.
   */
  submit<T>(turn: Turn<T>, options: SubmitOptions<W> = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => this.submitThen(turn, options, resolve, reject));
  }

  /**
   * `submit` without a promise: `resolve` or `reject` is called exactly once, in the turn that settles
   * it — a refusal at once, a turn that returns a plain value as it returns. A queue whose handlers
   * answer synchronously then runs to its end inside the turn that fed it, and the answers leave in
   * one batch, as channel replies do.
   */
  submitThen<T>(
    turn: Turn<T>,
    options: SubmitOptions<W>,
    resolve: (value: T) => void,
    reject: (error: unknown) => void,
  ): void {
    this.submitJob(new ThenJob(turn, options, resolve as (value: unknown) => void, reject));
  }

  /** `submitThen` with the turn, its options and its outcomes in one object, as a dispatcher makes it. */
  submitJob(job: TurnJob<W>): void {
    const refusal = this.refusal(job);
    if (refusal) return job.reject(refusal);
    // Nothing runs, waits or is being started and a permit is free: it starts now, with no queue entry.
    // Inside the pump's loop (a turn's callback submitting) it queues instead, so turns never nest.
    if (
      this.queue.length === 0 &&
      !this.current &&
      !this.admission &&
      !this.pumping &&
      this.jobs.tryAcquire()
    )
      return this.execute(job, job.oneWay ? undefined : currentTurn());
    const entry: Entry<W> = { job, awaitedBy: job.oneWay ? undefined : currentTurn(), timer: false };
    const signal = job.signal;
    if (signal) {
      entry.onAbort = () => this.withdraw(entry);
      signal.addEventListener('abort', entry.onAbort, { once: true });
    }
    this.queue.push(entry);
    this.pump();
  }

  /**
   * Stops starting turns and resolves once the running one (if any) has ended; the queue is kept, in
   * order, and timers that come due are held. New submissions are refused `Unavailable` meanwhile: the
   * relocation layer holds what arrives after the seal. `unseal()` resumes; on a closed object it
   * resolves at once.
   */
  seal(): Promise<void> {
    if (this.phase === 'open') {
      this.phase = 'sealed';
      this.admission?.abort();
    }
    return this.whenIdle();
  }

  /**
   * Resumes a sealed object (a relocation that failed before relay-ready): queued turns and held timers run.
   */
  unseal(): void {
    if (this.phase !== 'sealed') return;
    this.phase = 'open';
    this.timers.resume();
    this.pump();
  }

  /** The `work` of the turns waiting, in order (timer firings excluded: see `timers.pending()`). */
  queuedWork(): W[] {
    return this.queue.filter((e) => !e.timer).map((e) => e.job.work as W);
  }

  /**
   * Takes the waiting turns out of a sealed queue, in order, for the new owner to run. Their local
   * promises end `Unavailable` with `details.reason: 'handedOff'`: the work moved with the object and the
   * new owner answers it, so a dispatcher sends no reply for such a turn (`isHandedOff`). On a queue that
   * is not sealed it takes nothing.
   */
  handOff(): W[] {
    if (this.phase !== 'sealed') return [];
    const taken = this.queue.splice(0);
    const works: W[] = [];
    for (const entry of taken) {
      this.detach(entry);
      if (entry.timer) continue;
      works.push(entry.job.work as W);
      entry.job.reject(
        refusedTurn(this.key, 'Unavailable', 'the turn moved with the object to its new owner', 'handedOff'),
      );
    }
    return works;
  }

  /**
   * Call after the owner lease was refreshed again (and ownership re-checked): the turns held while
   * fenced start, in order, and timers that came due meanwhile fire. A no-op while still fenced.
   */
  fenceLifted(): void {
    if (this.phase !== 'open' || this.fenced()) return;
    this.timers.resume();
    this.pump();
  }

  /**
   * Deactivation: clears the timers, ends every turn still waiting with `code` (default `Unavailable`,
   * `details.reason` = `reason`; each exactly once) and refuses new ones the same way. Resolves once the
   * running turn, which is never interrupted, has ended. Idempotent: a second call keeps the first reason.
   */
  close(reason: string, code: ClosingCode = 'Unavailable'): Promise<void> {
    if (this.phase !== 'closed') {
      this.phase = 'closed';
      this.closing = { reason, code };
      this.timers.closeAll();
      this.admission?.abort();
      for (const entry of this.queue.splice(0)) {
        this.detach(entry);
        if (!entry.timer) entry.job.reject(closedRefusal(this.key, this.closing));
      }
    }
    return this.whenIdle();
  }

  private refusal(options: SubmitOptions<W>): ZLinkError | undefined {
    if (this.phase === 'closed') return closedRefusal(this.key, this.closing);
    // Only code running inside some turn can be waiting for this one (the name is built only then).
    if (!options.oneWay && currentTurn() !== undefined) {
      const self = selfSubmitRefusal(`turn of ${describeObject(this.key)}`, this.key, this);
      if (self) return self;
    }
    if (options.signal?.aborted) return cancelledError(`turn of ${describeObject(this.key)}`, options.signal);
    const limit = options.carried ? Infinity : this.queueLimit;
    return admissionRefusal(this.key, this.fenced(), this.phase, this.queue.length, limit);
  }

  private enqueueTimerTurn(run: () => unknown, failed: (error: unknown) => void): void {
    if (this.phase === 'closed') return;
    this.queue.push({
      job: new ThenJob(run, {}, () => undefined, failed),
      awaitedBy: undefined,
      timer: true,
    });
    this.pump();
  }

  /**
   * Starts the head's wait for a permit when nothing runs or waits for one and turns may start. While
   * fenced nothing starts, queued work included: another node may hold the object by now (its view of
   * this owner's lease lapsed), and a turn run here then would be a second owner's.
   */
  private pump(): void {
    // Re-entered from a turn that ended inside this loop: the loop goes on with the next one.
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.current && !this.admission && this.phase === 'open' && !this.fenced()) {
        const head = this.queue[0];
        if (!head) return;
        // A free permit is taken at once and the turn starts in this turn (as a channel record does):
        // no wait to abort, no AbortController and no promise for the admission on the common path.
        if (!this.jobs.tryAcquire()) {
          this.waitForPermit(head);
          return;
        }
        this.queue.shift();
        this.detach(head);
        this.execute(head.job, head.awaitedBy);
      }
    } finally {
      this.pumping = false;
    }
  }

  private pumping = false;

  private waitForPermit(head: Entry<W>): void {
    const admission = new AbortController();
    this.admission = admission;
    this.jobs.acquire(admission.signal).then(
      () => this.admitted(head, admission),
      () => this.admissionEnded(),
    );
  }

  private admitted(head: Entry<W>, admission: AbortController): void {
    this.admission = undefined;
    // Whoever aborted after the grant (seal, close, the caller's signal) has already dealt with the head;
    // the permit goes straight back. So it does when the fence came down while the head waited for it:
    // the head stays queued until `fenceLifted()`.
    if (admission.signal.aborted || this.queue[0] !== head || this.fenced()) {
      this.jobs.release();
      this.settled();
      return;
    }
    this.queue.shift();
    this.detach(head);
    this.execute(head.job, head.awaitedBy);
  }

  private admissionEnded(): void {
    this.admission = undefined;
    this.settled();
  }

  /** Runs one turn; one that returns a plain value (or throws) ends before this returns. */
  private execute(job: TurnJob<W>, awaitedBy: TurnContext | undefined): void {
    const context: TurnContext = { key: this.key, owner: this, awaitedBy, active: true };
    this.current = context;
    let result: unknown;
    try {
      result = runInTurn(context, job);
    } catch (error) {
      return this.finish(context, job, false, error);
    }
    if (!isThenable(result)) return this.finish(context, job, true, result);
    result.then(
      (value) => this.finish(context, job, true, value),
      (error: unknown) => this.finish(context, job, false, error),
    );
  }

  /**
   * Set on a persistent object's queue (docs/objects.md#durable-objects): runs as each turn ends, before
   * the next starts; what it throws ends the turn instead of its result (the turn's own failure wins).
   */
  boundary: (() => void) | undefined = undefined;

  /** On a persistent object's queue: why a durable timer labelled `label` cannot be armed, if not. */
  durableTimers: ((label: string | undefined) => string | undefined) | undefined = undefined;

  /** The turn's work is done: the boundary, then the turn ends and its outcome is given. */
  private finish(context: TurnContext, job: TurnJob<W>, ok: boolean, value: unknown): void {
    if (this.boundary !== undefined) {
      try {
        this.boundary();
      } catch (error) {
        if (ok) {
          ok = false;
          value = error;
        }
      }
    }
    this.ended(context);
    settle(job, ok, value);
  }

  /** The running turn is over: its permit goes back and the next one may start. */
  private ended(context: TurnContext): void {
    this.ran++;
    context.active = false;
    this.current = undefined;
    this.jobs.release();
    this.settled();
  }

  /** A caller's signal withdrew a waiting turn. */
  private withdraw(entry: Entry<W>): void {
    const at = this.queue.indexOf(entry);
    if (at < 0) return; // started or settled already
    this.queue.splice(at, 1);
    if (at === 0) this.admission?.abort();
    entry.job.reject(cancelledError(`turn of ${describeObject(this.key)}`, entry.job.signal));
  }

  private detach(entry: Entry<W>): void {
    if (entry.onAbort) entry.job.signal?.removeEventListener('abort', entry.onAbort);
  }

  private settled(): void {
    if (!this.current && !this.admission) {
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
    this.pump();
  }

  private whenIdle(): Promise<void> {
    if (!this.current && !this.admission) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
