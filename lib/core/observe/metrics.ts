import type { DeliveryResult, RouteKind } from './outcomes.js';
import { BOUNDS, CallMetrics, LatencyHistogram } from './call-metrics.js';
import { type ObjectMetricsSnapshot, ObjectMetricsRegistry } from './object-metrics.js';
import { type MulticastMetricsSnapshot, MulticastMetricsRegistry } from './multicast-metrics.js';

/**
 * Counters and latency histograms per channel, kept where the work happens: each send path and
 * each handler scope takes its `ChannelMetrics` once, when it is built, and a message then bumps a
 * field — no lookup, no allocation, no string built per message. Rare outcomes (failures, drops)
 * go through a map.
 */

export { CallMetrics, LATENCY_BUCKETS_MS, LATENCY_SAMPLE_WEIGHT, LatencyHistogram } from './call-metrics.js';

/** The handler side of one channel (or one mesh's Node direct namespace, or one fanout channel). */
export class HandlerMetrics {
  /** Deliveries that ended `ok` — counted here, not through the event stream (see `ZLinkEvents`). */
  ok = 0;
  /** Every other delivery result, counted from the `delivery` events. */
  readonly failures = new Map<Exclude<DeliveryResult, 'ok'>, number>();
  /** Handler run time, sampled (see `LATENCY_SAMPLE_WEIGHT`), for deliveries that reached a handler. */
  readonly duration = new LatencyHistogram();
}

/** Labels of one metrics scope. `channel` is absent for a mesh's Node direct namespace. */
export interface MetricsScope {
  readonly route: RouteKind;
  readonly channel: string | undefined;
  readonly mesh: string | undefined;
}

export interface ScopeMetrics extends MetricsScope {
  readonly calls: CallMetrics;
  readonly handlers: HandlerMetrics;
}

/** A copy of every counter at one moment (`runtime.metrics()`). */
export interface MetricsSnapshot {
  readonly scopes: readonly {
    readonly route: RouteKind;
    readonly channel: string | undefined;
    readonly mesh: string | undefined;
    readonly sends: number;
    readonly requests: number;
    readonly outcomes: Readonly<Record<string, number>>;
    readonly refused: Readonly<Record<string, number>>;
    readonly requestLatency: HistogramSnapshot;
    readonly deliveries: Readonly<Record<string, number>>;
    readonly handlerDuration: HistogramSnapshot;
  }[];
  /** Every observability event emitted, per type (`delivery`, `server_lost`, ...). */
  readonly events: Readonly<Record<string, number>>;
  /** Per Spot and Actor type: calls from here, turns run here, activations, store reads, queue depth. */
  readonly objects: readonly ObjectMetricsSnapshot[];
  /** Per Logical Multicast (mesh, channel, topic): published, records out and in, delivered, refused. */
  readonly multicast: readonly MulticastMetricsSnapshot[];
}

export interface HistogramSnapshot {
  /** Upper bound (ms) → count of observations at or below it (cumulative); `+Inf` last. */
  readonly buckets: readonly { readonly le: number; readonly count: number }[];
  readonly count: number;
  readonly sumMs: number;
}

/** The registry: one `ScopeMetrics` per (route, mesh, channel), created on first ask. */
export class ZLinkMetrics {
  private readonly scopes = new Map<string, ScopeMetrics>();
  /** Per object type (the object layer takes its entries when it builds an activation or a call path). */
  readonly objects = new ObjectMetricsRegistry();
  /** Per Logical Multicast topic (the object layer takes its entry once per topic it meets). */
  readonly multicast = new MulticastMetricsRegistry();

  /** Called when a send path or handler scope is built, never per message. */
  scope(route: RouteKind, channel: string | undefined, mesh: string | undefined): ScopeMetrics {
    const key = `${route}\u0000${mesh ?? ''}\u0000${channel ?? ''}`;
    let found = this.scopes.get(key);
    if (!found) {
      found = { route, channel, mesh, calls: new CallMetrics(), handlers: new HandlerMetrics() };
      this.scopes.set(key, found);
    }
    return found;
  }

  snapshot(events: ReadonlyMap<string, number>): MetricsSnapshot {
    return {
      scopes: [...this.scopes.values()].map((s) => ({
        route: s.route,
        channel: s.channel,
        mesh: s.mesh,
        sends: s.calls.sends,
        requests: s.calls.requests,
        outcomes: outcomes(s.calls),
        refused: Object.fromEntries(s.calls.refused),
        requestLatency: histogramSnapshot(s.calls.latency),
        deliveries: { ok: s.handlers.ok, ...Object.fromEntries(s.handlers.failures) },
        handlerDuration: histogramSnapshot(s.handlers.duration),
      })),
      events: Object.fromEntries([...events].filter(([key]) => !key.includes(':'))),
      objects: this.objects.snapshot(),
      multicast: this.multicast.snapshot(),
    };
  }
}

function outcomes(calls: CallMetrics): Record<string, number> {
  const out: Record<string, number> = calls.replies > 0 ? { reply: calls.replies } : {};
  for (const [code, n] of calls.failures) out[code] = n;
  return out;
}

function histogramSnapshot(h: LatencyHistogram): HistogramSnapshot {
  let running = 0;
  const buckets = Array.from(h.buckets, (n, i) => {
    running += n;
    return { le: i < BOUNDS.length ? (BOUNDS[i] as number) : Infinity, count: running };
  });
  return { buckets, count: h.count, sumMs: h.sumMs };
}
