import { CallMetrics } from './call-metrics.js';

/** Counters of one object type on this node (issue 16 item 9), kept where the work happens. */
export class ObjectTypeMetrics {
  /**
   * Calls this node's callers started to objects of the type: sends, requests, and their terminals
   * (replies, failures per code, latency), counted where they end — the pending table for requests.
   */
  readonly calls = new CallMetrics();
  /** Turns run here for objects of the type (handlers, not timers or lifecycle hooks). */
  handled = 0;
  activations = 0;
  deactivations = 0;
  /** Authority Store reads this node made to resolve, create or check objects of the type. */
  storeReads = 0;
  /**
   * State Store writes of durable objects of the type (docs/objects.md#durable-objects): acknowledged,
   * failed (not landed: the store did not answer or could not read its row), fenced (another owner took
   * the object over).
   */
  readonly stateWrites = { ok: 0, failed: 0, fenced: 0 };
  /** Activations that came back with saved state. */
  restores = 0;
  /** Activations put to sleep after `persist.idleMs`. */
  passivations = 0;
  /** Messages waiting in the queues of this node's activations of the type, now (set by the owner). */
  queueDepth: () => number = () => 0;

  /** A call that ended before it reached the pending table (or a send that failed), per code. */
  fail(code: string): void {
    this.calls.failures.set(code, (this.calls.failures.get(code) ?? 0) + 1);
  }
}

export interface ObjectMetricsSnapshot {
  readonly kind: 'spot' | 'actor';
  readonly type: string;
  readonly sends: number;
  readonly requests: number;
  readonly replies: number;
  readonly failures: Readonly<Record<string, number>>;
  readonly handled: number;
  readonly activations: number;
  readonly deactivations: number;
  readonly storeReads: number;
  readonly queueDepth: number;
  /** Durable classes only: State Store writes by result, restores, passivations. */
  readonly stateWrites: { readonly ok: number; readonly failed: number; readonly fenced: number };
  readonly restores: number;
  readonly passivations: number;
}

/** One `ObjectTypeMetrics` per (kind, type), made on first ask (never per message: callers keep theirs). */
export class ObjectMetricsRegistry {
  private readonly byType = new Map<string, { kind: 'spot' | 'actor'; type: string; m: ObjectTypeMetrics }>();

  of(kind: 'spot' | 'actor', type: string): ObjectTypeMetrics {
    const key = `${kind} ${type}`;
    let found = this.byType.get(key);
    if (!found) this.byType.set(key, (found = { kind, type, m: new ObjectTypeMetrics() }));
    return found.m;
  }

  snapshot(): ObjectMetricsSnapshot[] {
    return [...this.byType.values()].map(({ kind, type, m }) => ({
      kind,
      type,
      sends: m.calls.sends,
      requests: m.calls.requests,
      replies: m.calls.replies,
      failures: Object.fromEntries(m.calls.failures),
      handled: m.handled,
      activations: m.activations,
      deactivations: m.deactivations,
      storeReads: m.storeReads,
      queueDepth: m.queueDepth(),
      stateWrites: { ...m.stateWrites },
      restores: m.restores,
      passivations: m.passivations,
    }));
  }
}
