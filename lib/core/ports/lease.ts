import { configurationError } from '../errors.js';
import type { ZLinkEvents } from '../observe/events.js';
import { answerWithin } from '../calls/timers.js';
import { isRecord, positiveInt } from '../option-checks.js';
import { type LocationDescriptor, type LocationStore, descriptorScope } from './ports.js';
import type { StoreHealth } from './store-health.js';

/** Lease timing (docs/protocol.md#owner-lease-and-fencing); all in ms. */
export interface LeaseTiming {
  /** How long a descriptor lives in the store without a refresh. @default 10000 */
  readonly ttlMs: number;
  /** How often the owner refreshes. @default 3000 */
  readonly refreshMs: number;
  /** The longest one refresh may take before it counts as failed. @default 2000 */
  readonly refreshTimeoutMs: number;
  /** How long before the store could let the lease lapse the owner stops admitting. @default 1000 */
  readonly marginMs: number;
}

export const DEFAULT_LEASE_TIMING: LeaseTiming = {
  ttlMs: 10000,
  refreshMs: 3000,
  refreshTimeoutMs: 2000,
  marginMs: 1000,
};

/**
 * Validates lease timing: positive integers with `refresh + refreshTimeout + margin < ttl`, or a
 * `Configuration` error naming the field. Otherwise one slow refresh could let the lease lapse in the store
 * while the owner still believes it holds it (docs/protocol.md#owner-lease-and-fencing: look at all four when
 * changing one).
 */
export function normalizeLeaseTiming(field: string, value: unknown): LeaseTiming {
  if (value === undefined) return DEFAULT_LEASE_TIMING;
  if (!isRecord(value))
    throw configurationError(field, 'must be an object { ttlMs, refreshMs, refreshTimeoutMs, marginMs }');
  const d = DEFAULT_LEASE_TIMING;
  const timing: LeaseTiming = {
    ttlMs: positiveInt(`${field}.ttlMs`, value.ttlMs, d.ttlMs),
    refreshMs: positiveInt(`${field}.refreshMs`, value.refreshMs, d.refreshMs),
    refreshTimeoutMs: positiveInt(`${field}.refreshTimeoutMs`, value.refreshTimeoutMs, d.refreshTimeoutMs),
    marginMs: positiveInt(`${field}.marginMs`, value.marginMs, d.marginMs),
  };
  const sum = timing.refreshMs + timing.refreshTimeoutMs + timing.marginMs;
  if (sum >= timing.ttlMs) {
    throw configurationError(
      field,
      `refreshMs + refreshTimeoutMs + marginMs (${sum}) must be less than ttlMs (${timing.ttlMs})`,
    );
  }
  return timing;
}

/**
 * An owner lease over a set of descriptors (docs/protocol.md#owner-lease-and-fencing): writes them, refreshes
 * them on an interval, and tells when the owner is fenced — no refresh has succeeded for `ttl - margin` since
 * the last good one started, so the store may let them lapse any moment and the owner must stop admitting new
 * business messages. A later successful refresh (or a re-put of descriptors the store already dropped) lifts
 * the fence. `stop()` removes the descriptors.
 */
export class OwnerLease {
  private descriptors: LocationDescriptor[] = [];
  private lastGoodStart = 0;
  private fenced = false;
  private refreshTimer: NodeJS.Timeout | undefined;
  private fenceTimer: NodeJS.Timeout | undefined;
  private refreshing = false;
  /** An `update` failed to reach the store: the next refresh writes every descriptor. */
  private unwritten = false;
  private stopped = false;

  constructor(
    private readonly store: LocationStore,
    private readonly timing: LeaseTiming,
    private readonly events: ZLinkEvents,
    /** Told on every change of `isFenced`, so admission can follow it without a check per message. */
    private readonly onFence: (fenced: boolean) => void = () => undefined,
    /** Told of a refresh that took too long (the store's own failures reach it by the store). */
    private readonly health?: StoreHealth,
  ) {}

  /**
   * `true` from the fencing deadline until a refresh succeeds again — by the clock, not only once the
   * fence timer ran: after a process was stopped (SIGSTOP, a long GC pause) its I/O may be read
   * before its timers fire, and a message read then must already find the owner fenced.
   */
  get isFenced(): boolean {
    return this.fenced || (this.lastGoodStart > 0 && !this.stopped && Date.now() >= this.deadline());
  }

  private deadline(): number {
    return this.lastGoodStart + this.timing.ttlMs - this.timing.marginMs;
  }

  /**
   * Writes the descriptors and starts refreshing. Resolves `false` when the store could not take
   * them now (an outage at startup): the next refresh writes them, and the fence falls due as if this
   * attempt had been a good one — a process may start while the store is down and be found after.
   */
  async start(descriptors: readonly LocationDescriptor[]): Promise<boolean> {
    this.descriptors = [...descriptors];
    const started = Date.now();
    let written = true;
    try {
      await this.putAll();
    } catch {
      this.unwritten = true;
      written = false;
    }
    // Stopped while the first write was under way (the owner closed while starting): arm nothing.
    if (this.stopped) return written;
    this.held(started);
    this.refreshTimer = setInterval(() => void this.refresh(), this.timing.refreshMs);
    return written;
  }

  /**
   * A descriptor changed (weight, drain): the new revision replaces it in the lease and the store.
   * Never rejects: when the store cannot take it now, the next refresh writes it.
   */
  async update(descriptor: LocationDescriptor): Promise<void> {
    // Only a descriptor the lease holds: one released (drained) or stopped never comes back.
    const i = this.descriptors.findIndex((d) => sameDescriptor(d, descriptor));
    if (i < 0 || this.stopped) return;
    this.descriptors[i] = descriptor;
    try {
      await this.store.put(descriptor, this.timing.ttlMs);
    } catch {
      this.unwritten = true;
    }
  }

  /**
   * Releases one descriptor (its owner drained): no longer refreshed, removed from the store. Never
   * rejects: a store that cannot answer lets it lapse with its lease.
   */
  async release(descriptor: LocationDescriptor): Promise<void> {
    this.descriptors = this.descriptors.filter((d) => !sameDescriptor(d, descriptor));
    await this.store.remove(descriptor).catch(() => undefined);
  }

  /** Stops refreshing and removes the descriptors (graceful stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    if (this.fenceTimer) clearTimeout(this.fenceTimer);
    await Promise.all(this.descriptors.map((d) => this.store.remove(d).catch(() => undefined)));
  }

  private async refresh(): Promise<void> {
    if (this.refreshing || this.stopped) return;
    this.refreshing = true;
    const started = Date.now();
    try {
      const { refreshTimeoutMs } = this.timing;
      const alive = await answerWithin(
        this.store.refresh(this.descriptors, this.timing.ttlMs),
        refreshTimeoutMs,
        () => {
          throw new Error(`no answer within ${refreshTimeoutMs} ms`);
        },
      );
      // Gone from the store (it lapsed, the store restarted empty) or a change never reached it:
      // write them again (a stale revision is refused by the store, so this never rolls back).
      if (!alive || this.unwritten) {
        this.unwritten = false;
        await this.putAll();
      }
      if (!this.stopped) this.held(started);
    } catch (error) {
      // A failed or slow refresh: the fence timer decides when that matters; a put may be partial.
      this.unwritten = true;
      this.health?.failed(`lease refresh: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.refreshing = false;
    }
  }

  /** Writes every held descriptor; one released meanwhile is skipped (it must not come back). */
  private async putAll(): Promise<void> {
    for (const d of [...this.descriptors]) {
      if (this.stopped || !this.descriptors.includes(d)) continue;
      await this.store.put(d, this.timing.ttlMs);
    }
  }

  /** A refresh that started at `started` succeeded: the fencing deadline moves to started + ttl - margin. */
  private held(started: number): void {
    // The deadline passed before this refresh landed (the fence timer was late): the fence still
    // happens, so whatever re-checks its state after a fence (object ownership) does so.
    if (this.lastGoodStart > 0 && Date.now() >= this.deadline()) this.fence();
    this.lastGoodStart = Math.max(this.lastGoodStart, started);
    if (this.fenced) {
      this.fenced = false;
      this.events.emit({ type: 'lease', state: 'held' });
      this.onFence(false);
    }
    if (this.fenceTimer) clearTimeout(this.fenceTimer);
    const deadline = this.deadline();
    this.fenceTimer = setTimeout(() => this.fence(), Math.max(0, deadline - Date.now()));
  }

  private fence(): void {
    if (this.stopped || this.fenced) return;
    this.fenced = true;
    this.events.emit({ type: 'lease', state: 'fenced' });
    this.onFence(true);
  }
}

/** One descriptor across revisions: (kind, scope, RID, generation), as the store keys it. */
function sameDescriptor(a: LocationDescriptor, b: LocationDescriptor): boolean {
  return (
    a.kind === b.kind &&
    descriptorScope(a) === descriptorScope(b) &&
    a.rid === b.rid &&
    a.generation === b.generation
  );
}
