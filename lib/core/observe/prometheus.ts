import type { HistogramSnapshot, MetricsSnapshot } from './metrics.js';

/**
 * The Prometheus text exposition (format 0.0.4) of a metrics snapshot: what a `/metrics` route returns.
 * Durations are in seconds, as Prometheus names them; labels carry route, mesh and channel only — never a
 * packet, payload or peer identity (docs/protocol.md#what-observability-separates: no high-cardinality
 * labels).
 */
export function toPrometheusText(snapshot: MetricsSnapshot, prefix = 'zlink'): string {
  const out: string[] = [];
  const family = (name: string, type: string, help: string): string => {
    const full = `${prefix}_${name}`;
    out.push(`# HELP ${full} ${help}`, `# TYPE ${full} ${type}`);
    return full;
  };

  const calls = family('calls_total', 'counter', 'Sends and requests submitted, per channel.');
  for (const s of snapshot.scopes) {
    if (s.sends > 0) out.push(`${calls}{${labels(s, { kind: 'send' })}} ${s.sends}`);
    if (s.requests > 0) out.push(`${calls}{${labels(s, { kind: 'request' })}} ${s.requests}`);
  }
  const ended = family('requests_ended_total', 'counter', 'Requests per terminal: reply or error code.');
  for (const s of snapshot.scopes) {
    for (const [outcome, n] of Object.entries(s.outcomes))
      out.push(`${ended}{${labels(s, { outcome })}} ${n}`);
  }
  const refused = family('calls_refused_total', 'counter', 'Calls ended before they were queued, per code.');
  for (const s of snapshot.scopes) {
    for (const [code, n] of Object.entries(s.refused)) out.push(`${refused}{${labels(s, { code })}} ${n}`);
  }
  const latency = family('request_duration_seconds', 'histogram', 'Time from submit to terminal.');
  for (const s of snapshot.scopes)
    if (s.requestLatency.count > 0) histogram(out, latency, labels(s), s.requestLatency);

  const deliveries = family('deliveries_total', 'counter', 'Received business records per delivery result.');
  for (const s of snapshot.scopes) {
    for (const [result, n] of Object.entries(s.deliveries)) {
      if (n > 0) out.push(`${deliveries}{${labels(s, { result })}} ${n}`);
    }
  }
  const handlers = family('handler_duration_seconds', 'histogram', 'Handler run time.');
  for (const s of snapshot.scopes) {
    if (s.handlerDuration.count > 0) histogram(out, handlers, labels(s), s.handlerDuration);
  }
  objectFamilies(snapshot, family, out);
  multicastFamilies(snapshot, family, out);
  const events = family('events_total', 'counter', 'Observability events emitted, per type.');
  for (const [type, n] of Object.entries(snapshot.events)) out.push(`${events}{type="${escape(type)}"} ${n}`);
  return `${out.join('\n')}\n`;
}

/** Per object type (kind and type are labels: a deployment has few, never one per object id). */
function objectFamilies(
  snapshot: MetricsSnapshot,
  family: (name: string, type: string, help: string) => string,
  out: string[],
): void {
  if (snapshot.objects.length === 0) return;
  const counters: [string, string, (o: MetricsSnapshot['objects'][number]) => Record<string, number>][] = [
    [
      'object_calls_total',
      'Calls to objects of the type started here.',
      (o) => ({ send: o.sends, request: o.requests }),
    ],
    ['object_handled_total', 'Turns run here for objects of the type.', (o) => ({ '': o.handled })],
    [
      'object_activations_total',
      'Activations begun and ended here.',
      (o) => ({ activated: o.activations, deactivated: o.deactivations }),
    ],
    [
      'object_store_reads_total',
      'Authority Store reads made here for the type.',
      (o) => ({ '': o.storeReads }),
    ],
    [
      'object_state_writes_total',
      'State Store writes of durable objects of the type, by result.',
      (o) => ({ ok: o.stateWrites.ok, failed: o.stateWrites.failed, fenced: o.stateWrites.fenced }),
    ],
    [
      'object_state_restores_total',
      'Activations here that came back with saved state.',
      (o) => ({ '': o.restores }),
    ],
    [
      'object_passivations_total',
      'Durable objects put to sleep here after persist.idleMs.',
      (o) => ({ '': o.passivations }),
    ],
  ];
  const labelsOf = (o: { kind: string; type: string }, extra?: [string, string]) =>
    [
      `kind="${o.kind}"`,
      `type="${escape(o.type)}"`,
      ...(extra && extra[1] !== '' ? [`${extra[0]}="${extra[1]}"`] : []),
    ].join(',');
  for (const [name, help, values] of counters) {
    const full = family(name, 'counter', help);
    const label =
      name === 'object_calls_total' ? 'call' : name === 'object_state_writes_total' ? 'result' : 'state';
    for (const o of snapshot.objects)
      for (const [k, n] of Object.entries(values(o))) out.push(`${full}{${labelsOf(o, [label, k])}} ${n}`);
  }
  const failed = family(
    'object_calls_failed_total',
    'counter',
    'Calls to objects that ended otherwise, per code.',
  );
  for (const o of snapshot.objects)
    for (const [code, n] of Object.entries(o.failures))
      out.push(`${failed}{${labelsOf(o, ['code', escape(code)])}} ${n}`);
  const depth = family(
    'object_queue_depth',
    'gauge',
    "Messages waiting in this node's object queues, per type.",
  );
  for (const o of snapshot.objects) out.push(`${depth}{${labelsOf(o)}} ${o.queueDepth}`);
}

/** Per Logical Multicast topic (mesh, channel and topic are labels: topics are declared, never per id). */
function multicastFamilies(
  snapshot: MetricsSnapshot,
  family: (name: string, type: string, help: string) => string,
  out: string[],
): void {
  if (snapshot.multicast.length === 0) return;
  type Topic = MetricsSnapshot['multicast'][number];
  const labelsOf = (t: Topic, extra?: [string, string]) =>
    [
      `mesh="${escape(t.mesh)}"`,
      `channel="${escape(t.channel)}"`,
      `topic="${escape(t.topic)}"`,
      ...(extra ? [`${extra[0]}="${escape(extra[1])}"`] : []),
    ].join(',');
  const counters: [string, string, (t: Topic) => number][] = [
    ['multicast_published_total', 'Logical Multicast publishes handed over here.', (t) => t.published],
    ['multicast_records_sent_total', 'Event records queued here for other nodes.', (t) => t.records],
    ['multicast_records_received_total', 'Event records that arrived here.', (t) => t.received],
    ['multicast_delivered_total', "Events put into a subscribed Spot's queue here.", (t) => t.delivered],
    ['multicast_handled_total', 'Event turns whose handler returned.', (t) => t.handled],
    ['multicast_dropped_total', 'Event records that found no subscribed Spot here.', (t) => t.dropped],
    [
      'multicast_duplicates_total',
      'Event turns skipped: the Spot had run that event already.',
      (t) => t.duplicates,
    ],
  ];
  for (const [name, help, value] of counters) {
    const full = family(name, 'counter', help);
    for (const t of snapshot.multicast) out.push(`${full}{${labelsOf(t)}} ${value(t)}`);
  }
  const perCode: [string, string, (t: Topic) => Readonly<Record<string, number>>][] = [
    ['multicast_refused_total', 'Events a subscribed Spot could not take, per code.', (t) => t.refused],
    ['multicast_failed_total', 'Event turns whose handler threw, per code.', (t) => t.failed],
  ];
  for (const [name, help, counts] of perCode) {
    const full = family(name, 'counter', help);
    for (const t of snapshot.multicast)
      for (const [code, n] of Object.entries(counts(t)))
        out.push(`${full}{${labelsOf(t, ['code', code])}} ${n}`);
  }
}

function histogram(out: string[], name: string, base: string, h: HistogramSnapshot): void {
  const sep = base.length > 0 ? ',' : '';
  for (const b of h.buckets) {
    const le = b.le === Infinity ? '+Inf' : String(b.le / 1000);
    out.push(`${name}_bucket{${base}${sep}le="${le}"} ${b.count}`);
  }
  out.push(`${name}_sum{${base}} ${h.sumMs / 1000}`, `${name}_count{${base}} ${h.count}`);
}

function labels(
  scope: { route: string; mesh: string | undefined; channel: string | undefined },
  extra: Record<string, string> = {},
): string {
  const all: [string, string | undefined][] = [
    ['route', scope.route],
    ['mesh', scope.mesh],
    ['channel', scope.channel],
    ...Object.entries(extra),
  ];
  return all
    .filter((pair): pair is [string, string] => pair[1] !== undefined)
    .map(([k, v]) => `${k}="${escape(v)}"`)
    .join(',');
}

/** Label values escape backslash, double quote and newline. */
function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
