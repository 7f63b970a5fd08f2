import type { Clock } from '../resolve/index.js';
import type { Activation } from './activation.js';
import type { ActivationTable } from './activation-table.js';
import type { DurableClass } from './object-states.js';
import type { ObjectClassDescription } from '../../core/objects/index.js';

/** What the idle sweep works with. */
export interface PassivationDeps {
  readonly table: ActivationTable;
  readonly clock: Clock;
  readonly durableOf: (cls: ObjectClassDescription) => DurableClass | undefined;
  /** Whether the host takes no object work now (fenced, closing): nothing is passivated then. */
  readonly blocked: () => boolean;
  /** Saves `a` and lets it go, `passivated`; resolves `false` when it did not (its save failed, it woke). */
  readonly passivate: (a: Activation) => Promise<unknown>;
}

/** How often the sweep looks, as a share of the shortest `idleMs`: an object sleeps within a quarter more. */
const SWEEPS_PER_IDLE = 4;
const MIN_SWEEP_MS = 250;
const MAX_SWEEP_MS = 30_000;

/**
 * Passivation (docs/objects.md#durable-objects): an activation of a persistent class with `idleMs` that
 * ran no turn for that long, and holds nothing that would be lost or broken by its absence — no turn
 * running or waiting, no timer, no bound session, no Spot or members, no move, every write landed —
 * is saved and deactivated (its record released); the next get-or-create brings it back with its state.
 *
 * One sweep per host, not a timer per object: a million sleeping players cost no timers. An object's
 * idleness is read from its turn count: unchanged across `idleMs` of sweeps means no turn ran.
 */
export class Passivation {
  private readonly seen = new WeakMap<Activation, { turns: number; since: number }>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly deps: PassivationDeps) {}

  /** Starts sweeping when some class of `classes` has `idleMs`; a no-op otherwise. */
  start(classes: readonly ObjectClassDescription[]): void {
    const idle = classes
      .map((c) => this.deps.durableOf(c)?.persist.idleMs)
      .filter((ms): ms is number => ms !== undefined);
    if (idle.length === 0 || this.timer !== undefined) return;
    const every = Math.min(
      MAX_SWEEP_MS,
      Math.max(MIN_SWEEP_MS, Math.floor(Math.min(...idle) / SWEEPS_PER_IDLE)),
    );
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at every activation; the idle ones are passivated, at most one sweep at a time. */
  async sweep(): Promise<number> {
    if (this.running || this.deps.blocked()) return 0;
    this.running = true;
    try {
      const now = this.deps.clock.now();
      const sleepy: Activation[] = [];
      for (const a of this.deps.table.all()) {
        const idleMs = this.deps.durableOf(a.cls)?.persist.idleMs;
        if (idleMs === undefined) continue;
        const turns = a.turns.turnsRun;
        const last = this.seen.get(a);
        if (!idle(a) || last === undefined || last.turns !== turns) {
          this.seen.set(a, { turns, since: now });
          continue;
        }
        if (now - last.since >= idleMs) sleepy.push(a);
      }
      for (const a of sleepy) {
        this.seen.delete(a);
        await this.deps.passivate(a).catch(() => undefined);
      }
      return sleepy.length;
    } finally {
      this.running = false;
    }
  }
}

/** Whether nothing about `a` needs it awake now (see `Passivation`). */
function idle(a: Activation): boolean {
  const d = a.durable;
  return (
    a.state === 'ready' &&
    a.ingress === undefined &&
    !a.turns.busy &&
    a.turns.depth === 0 &&
    a.turns.state === 'open' &&
    a.turns.timers.size === 0 &&
    (a.sessions?.size ?? 0) === 0 &&
    a.membership.spot === undefined &&
    a.membership.joined.size === 0 &&
    d !== undefined &&
    d.clean &&
    d.unsaved === undefined
  );
}
