import { DRAINING_CODE, FENCED_CODE } from '../../core/errors.js';
import type { JobQueue } from '../../core/calls/index.js';
import { type InboundMessage, type InboundScope, failInbound, runInbound } from './inbound.js';
import { INBOUND_DRAIN_QUIET_MS } from '../timing.js';

/**
 * Why a received business record is not run: the receiver drains, or its owner lease is fenced
 * (docs/protocol.md#owner-lease-and-fencing).
 */
export type Refusal = 'draining' | 'fenced';

/** How a receiver that can refuse names itself and orders its refusals. */
export interface RefusalRules {
  /** How refusals name the receiver: "server of 'billing'", "node 'node-a'". */
  readonly who: string;
  /** Whether a draining refusal names the record's channel too (a MeshNode drains several at once). */
  readonly drainNamesChannel: boolean;
  /**
   * The refusal a record gets while both hold: a ClientServer listener says it drains (it leaves
   * for good); a MeshNode says it is fenced (that covers its Node direct records, which a drain spares).
   */
  readonly precedence: Refusal;
}

export interface InboundGateConfig {
  /** The runtime's one job queue: every handler run holds one of its permits. */
  readonly jobs: JobQueue;
  /** Absent: the receiver never refuses (fanout: no drain, no fence, and no reply to refuse with). */
  readonly refusals?: RefusalRules;
  /**
   * Records that may wait for a permit while the receive loop reads on; past it the loop waits
   * (`behind`, `caughtUp()`). 0 for a ClientServer listener and a fanout link: nothing else comes
   * on their sockets. A MeshNode reads on as long as it can: replies to its own requests arrive on
   * the same socket, and a handler waiting for one holds a permit.
   */
  readonly backlog: number;
  /**
   * Whether a record that waited for its permit is admitted again before it runs: a ClientServer
   * listener may have started draining meanwhile, and a record it has not run yet ends `Rejected`.
   */
  readonly recheck: boolean;
  /** Ends every wait for a permit (the receiver closed): the waiting record is dropped, never run. */
  readonly signal?: AbortSignal;
}

/**
 * The one inbound gate of a receiver (a ClientServer listener, a MeshNode, a fanout link): decides
 * whether a received business record is admitted — refused `Rejected` while draining or fenced —
 * and runs an admitted one under a permit of the runtime's job queue. A receive loop that cannot
 * get a permit stops reading, so zeromq's HWM pushes back on the sender. Replies take no permit.
 */
export class InboundGate {
  /** Set when the receiver drains (or closes): records a drain applies to are refused. */
  draining = false;
  /**
   * The owner lease is fenced (docs/protocol.md#owner-lease-and-fencing): every new business record is
   * refused until it is held.
   */
  fenced = false;
  private running = 0;
  private waiters = 0;
  private lastRefusedAt = 0;
  /**
   * The last wait for a permit: the queue is first come, first served, so every earlier one ended before it.
   */
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly config: InboundGateConfig) {}

  /** Handlers running under this gate's permits. */
  get inFlight(): number {
    return this.running;
  }

  /**
   * Whether the receive loop must wait (`caughtUp()`) before reading on: more records wait than `backlog`.
   */
  get behind(): boolean {
    return this.waiters > this.config.backlog;
  }

  /** Resolves when every record that waited for a permit so far has run (or was dropped at close). */
  caughtUp(): Promise<void> {
    return this.tail;
  }

  /**
   * Why a business record is refused now, or `undefined`: admitted. `drains` is false for a record a drain
   * does not stop (Node direct: the caller named this node, docs/protocol.md#node-direct); a fence stops
   * every one.
   */
  refusal(drains: boolean): Refusal | undefined {
    const rules = this.config.refusals;
    if (!rules) return undefined;
    const draining = drains && this.draining;
    if (draining && (rules.precedence === 'draining' || !this.fenced)) return 'draining';
    return this.fenced ? 'fenced' : undefined;
  }

  /**
   * Answers a refused request with `Rejected` (a send is dropped), and reports it. A draining
   * refusal also keeps `drain()` waiting for the quiet period.
   */
  refuse<C, M extends InboundMessage>(
    scope: InboundScope<C, M>,
    source: Buffer,
    correlation: number | undefined,
    message: { readonly packet: string },
    refusal: Refusal,
  ): void {
    const who = this.config.refusals?.who ?? 'receiver';
    if (refusal === 'fenced') {
      failInbound(scope, source, correlation, message, 'rejected', {
        code: FENCED_CODE,
        message: `${who} is fenced: its owner lease was not refreshed in time`,
      });
      return;
    }
    this.lastRefusedAt = Date.now();
    const channel = this.config.refusals?.drainNamesChannel ? ` '${String(scope.channel)}'` : '';
    failInbound(scope, source, correlation, message, 'rejected', {
      code: DRAINING_CODE,
      message: `${who} is draining${channel}`,
    });
  }

  /**
   * Admits `message` or refuses it (see `refusal`), and runs an admitted one through `scope` under
   * a job permit — at once when one is free, else when one is granted (in arrival order). The
   * receive loop reads on unless `behind` says it must wait for `caughtUp()`. Never throws.
   */
  deliver<C, M extends InboundMessage>(
    scope: InboundScope<C, M>,
    source: Buffer,
    correlation: number | undefined,
    message: M,
    drains: boolean,
  ): void {
    const refusal = this.refusal(drains);
    if (refusal) return this.refuse(scope, source, correlation, message, refusal);
    if (this.config.jobs.tryAcquire()) return this.run(scope, source, correlation, message);
    this.tail = this.whenPermitted(scope, source, correlation, message, drains);
  }

  /**
   * Drain (docs/protocol.md#drain): refuses the records a drain applies to from now on, and resolves once
   * accepted handlers are done (and `busy()` is not) and no refused record came for `INBOUND_DRAIN_QUIET_MS`,
   * or at the deadline (`'deadline'` while handlers still run), or as soon as `stopped()`.
   */
  async drain(
    deadlineMs: number,
    stopped: () => boolean,
    busy: () => boolean = () => false,
  ): Promise<'completed' | 'deadline'> {
    this.draining = true;
    const started = Date.now();
    const deadline = started + deadlineMs;
    while (!stopped() && Date.now() < deadline) {
      const idle = this.running === 0 && !busy();
      if (idle && Date.now() - Math.max(started, this.lastRefusedAt) >= INBOUND_DRAIN_QUIET_MS) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    return this.running > 0 ? 'deadline' : 'completed';
  }

  private async whenPermitted<C, M extends InboundMessage>(
    scope: InboundScope<C, M>,
    source: Buffer,
    correlation: number | undefined,
    message: M,
    drains: boolean,
  ): Promise<void> {
    this.waiters++;
    let granted = true;
    try {
      await this.config.jobs.acquire(this.config.signal);
    } catch {
      // Cancelled: the receiver closed. Handlers that never finish must not keep close() waiting.
      granted = false;
    }
    this.waiters--;
    if (!granted) return;
    const refusal = this.config.recheck ? this.refusal(drains) : undefined;
    if (refusal) {
      this.config.jobs.release();
      return this.refuse(scope, source, correlation, message, refusal);
    }
    this.run(scope, source, correlation, message);
  }

  private run<C, M extends InboundMessage>(
    scope: InboundScope<C, M>,
    source: Buffer,
    correlation: number | undefined,
    message: M,
  ): void {
    this.running++;
    const pending = runInbound(scope, source, correlation, message);
    if (pending === undefined) this.finished();
    else void pending.finally(this.finished);
  }

  private readonly finished = (): void => {
    this.running--;
    this.config.jobs.release();
  };
}
