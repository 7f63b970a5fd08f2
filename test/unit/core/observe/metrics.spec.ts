import { describe, expect, it } from '@jest/globals';
import {
  LATENCY_BUCKETS_MS,
  LATENCY_SAMPLE_WEIGHT,
  LatencyHistogram,
  ZLinkEvents,
  toPrometheusText,
} from '../../../../lib/core/index.js';

/** Metrics (issue 7): counters and latency histograms per channel, and their Prometheus text. */

describe('LatencyHistogram', () => {
  it('puts each observation in the first bucket whose bound it does not exceed; above every bound goes last', () => {
    const h = new LatencyHistogram();
    h.observe(0.05);
    h.observe(0.1);
    h.observe(0.11);
    h.observe(99_999);
    expect(h.buckets[0]).toBe(2);
    expect(h.buckets[1]).toBe(1);
    expect(h.buckets[LATENCY_BUCKETS_MS.length]).toBe(1);
    expect(h.count).toBe(4);
    expect(h.sumMs).toBeCloseTo(99_999.26, 5);
  });

  it('samples about one in LATENCY_SAMPLE_WEIGHT, without a period, and weighted observations count that many', () => {
    const h = new LatencyHistogram();
    let sampled = 0;
    const gaps = new Set<number>();
    let last = 0;
    for (let i = 1; i <= 80_000; i++) {
      if (!h.sample()) continue;
      sampled++;
      gaps.add(i - last);
      last = i;
    }
    expect(sampled).toBeGreaterThan(80_000 / LATENCY_SAMPLE_WEIGHT / 1.1);
    expect(sampled).toBeLessThan((80_000 / LATENCY_SAMPLE_WEIGHT) * 1.1);
    expect(gaps.size).toBeGreaterThan(10);
    h.observe(3, LATENCY_SAMPLE_WEIGHT);
    expect(h.count).toBe(LATENCY_SAMPLE_WEIGHT);
    expect(h.sumMs).toBe(3 * LATENCY_SAMPLE_WEIGHT);
  });
});

describe('ZLinkMetrics', () => {
  it('hands out one scope per (route, mesh, channel): the same object every time', () => {
    const events = new ZLinkEvents();
    const a = events.metrics.scope('route-mesh', 'match', 'game');
    expect(events.metrics.scope('route-mesh', 'match', 'game')).toBe(a);
    expect(events.metrics.scope('client-server', 'match', undefined)).not.toBe(a);
    expect(events.metrics.scope('route-mesh', undefined, 'game')).not.toBe(a);
  });

  it('a snapshot copies calls, outcomes, deliveries (ok plus failures from events) and cumulative buckets', () => {
    const events = new ZLinkEvents();
    const billing = events.metrics.scope('client-server', 'billing', undefined);
    billing.calls.sends = 3;
    billing.calls.requests = 2;
    billing.calls.replies = 1;
    billing.calls.latency.observe(0.3);
    billing.calls.failures.set('Timeout', 1);
    billing.calls.latency.observe(1200);
    billing.handlers.ok = 5;
    events.emit({ type: 'delivery', result: 'handler_error', route: 'client-server', channel: 'billing' });
    const snap = events.metrics.snapshot(events.counts);
    const s = snap.scopes[0];
    expect(s).toMatchObject({
      route: 'client-server',
      channel: 'billing',
      sends: 3,
      requests: 2,
      outcomes: { reply: 1, Timeout: 1 },
      deliveries: { ok: 5, handler_error: 1 },
    });
    expect(s?.requestLatency.count).toBe(2);
    const buckets = s?.requestLatency.buckets ?? [];
    expect(buckets.at(-1)).toEqual({ le: Infinity, count: 2 });
    expect(buckets.find((b) => b.le === 0.5)?.count).toBe(1);
    expect(buckets.find((b) => b.le === 2500)?.count).toBe(2);
    expect(snap.events).toEqual({ delivery: 1 });
  });
});

describe('toPrometheusText', () => {
  it('exposes counters and histograms in the text format, durations in seconds, labels escaped', () => {
    const events = new ZLinkEvents();
    const scope = events.metrics.scope('route-mesh', 'say "hi"\\', 'game');
    scope.calls.requests = 1;
    scope.calls.replies = 1;
    scope.calls.latency.observe(2);
    scope.handlers.ok = 1;
    scope.handlers.duration.observe(0.2);
    const text = toPrometheusText(events.metrics.snapshot(events.counts));
    const labels = 'route="route-mesh",mesh="game",channel="say \\"hi\\"\\\\"';
    expect(text).toContain('# TYPE zlink_calls_total counter');
    expect(text).toContain(`zlink_calls_total{${labels},kind="request"} 1`);
    expect(text).toContain(`zlink_requests_ended_total{${labels},outcome="reply"} 1`);
    expect(text).toContain('# TYPE zlink_request_duration_seconds histogram');
    expect(text).toContain(`zlink_request_duration_seconds_bucket{${labels},le="0.001"} 0`);
    expect(text).toContain(`zlink_request_duration_seconds_bucket{${labels},le="0.0025"} 1`);
    expect(text).toContain(`zlink_request_duration_seconds_bucket{${labels},le="+Inf"} 1`);
    expect(text).toContain(`zlink_request_duration_seconds_sum{${labels}} 0.002`);
    expect(text).toContain(`zlink_request_duration_seconds_count{${labels}} 1`);
    expect(text).toContain(`zlink_deliveries_total{${labels},result="ok"} 1`);
    expect(text).toContain(`zlink_handler_duration_seconds_count{${labels}} 1`);
    // Every sample line is `name{labels} value`, every family has HELP and TYPE.
    for (const line of text.trimEnd().split('\n')) {
      expect(line).toMatch(/^(# (HELP|TYPE) zlink_\w+ .+|zlink_\w+\{.*\} [0-9.e+-]+)$/);
    }
  });

  it('Logical Multicast counters per mesh, channel and topic, refusals and failures per code', () => {
    const events = new ZLinkEvents();
    const m = events.metrics.multicast.of('game', 'news', 'mile"stone');
    expect(events.metrics.multicast.of('game', 'news', 'mile"stone')).toBe(m);
    m.published = 2;
    m.records = 4;
    m.refused.set('Rejected', 3);
    const text = toPrometheusText(events.metrics.snapshot(events.counts));
    const labels = 'mesh="game",channel="news",topic="mile\\"stone"';
    expect(text).toContain(`zlink_multicast_published_total{${labels}} 2`);
    expect(text).toContain(`zlink_multicast_records_sent_total{${labels}} 4`);
    expect(text).toContain(`zlink_multicast_records_received_total{${labels}} 0`);
    expect(text).toContain(`zlink_multicast_refused_total{${labels},code="Rejected"} 3`);
    expect(text).not.toContain('zlink_multicast_failed_total{');
    for (const line of text.trimEnd().split('\n'))
      expect(line).toMatch(/^(# (HELP|TYPE) zlink_\w+ .+|zlink_\w+\{.*\} [0-9.e+-]+)$/);
  });
});
