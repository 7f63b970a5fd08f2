import type { Context, TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import { type TraceFields, type TracePropagation, encodeFrameworkFields } from '../core/wire/index.js';

type OpenTelemetryApi = typeof import('@opentelemetry/api');

/** Where `@opentelemetry/api` 1.x keeps what an application registered (context manager, propagator, SDK). */
const OPENTELEMETRY_GLOBAL = Symbol.for('opentelemetry.js.api.1');

/**
 * Trace propagation over OpenTelemetry, an optional peer. `@opentelemetry/api` is loaded here, once
 * per runtime start, never when the framework is imported — and only when the application already
 * registered something with it (an SDK, a context manager, a propagator): installed but unused, it is
 * not even loaded, as nothing could travel. Otherwise (or with `tracing: 'off'`) there is no hook,
 * records carry no trace and handlers run as they always did. Whatever the application registered
 * decides the rest: with no active span context, or a propagator that writes no `traceparent` (the
 * no-op one, B3...), the call carries nothing. Only W3C `traceparent` and `tracestate` travel (not
 * baggage). No spans are created here: the contract is propagation.
 */
export async function loadTracePropagation(mode: 'auto' | 'off'): Promise<TracePropagation | undefined> {
  if (mode === 'off' || (globalThis as Record<symbol, unknown>)[OPENTELEMETRY_GLOBAL] === undefined)
    return undefined;
  let api: OpenTelemetryApi;
  try {
    api = await import('@opentelemetry/api');
  } catch {
    return undefined; // registered through another copy this package cannot resolve: nothing changes
  }
  return openTelemetryPropagation(api);
}

function openTelemetryPropagation(api: OpenTelemetryApi): TracePropagation {
  const { context, propagation, trace, ROOT_CONTEXT } = api;
  // `inject` runs synchronously: one carrier and one setter serve every call.
  let traceparent: string | undefined;
  let tracestate: string | undefined;
  const carrier = {};
  const setter: TextMapSetter<object> = {
    set(_carrier, key, value) {
      if (key === 'traceparent') traceparent = value;
      else if (key === 'tracestate') tracestate = value;
    },
  };
  const getter: TextMapGetter<TraceFields> = {
    keys: (fields) => (fields.tracestate === undefined ? ['traceparent'] : ['traceparent', 'tracestate']),
    get: (fields, key) =>
      key === 'traceparent' ? fields.traceparent : key === 'tracestate' ? fields.tracestate : undefined,
  };
  // Calls made in one context share one field, and records of one trace one extracted context:
  // the last of each is kept (contexts are immutable), so a burst of calls injects, encodes and
  // parses once.
  let sentFrom: Context | undefined;
  let sent: Uint8Array | undefined;
  let received: { trace: TraceFields; context: Context } | undefined;
  return {
    inject() {
      const active = context.active();
      if (active === sentFrom) return sent;
      // No span context, no traceparent (whatever the propagator): the untraced call's whole cost.
      if (trace.getSpanContext(active) === undefined) return undefined;
      traceparent = tracestate = undefined;
      try {
        propagation.inject(active, carrier, setter);
      } catch {
        return undefined; // an application propagator that throws must not fail the call
      }
      const bytes = encodeFrameworkFields(traceparent, tracestate);
      // A copy: msgpackr's result is a view into its shared write buffer, too big to keep.
      sent = bytes && new Uint8Array(bytes);
      sentFrom = active;
      return sent;
    },
    run(fields, fn) {
      if (
        received === undefined ||
        received.trace.traceparent !== fields.traceparent ||
        received.trace.tracestate !== fields.tracestate
      ) {
        try {
          // From the root: the receive loop's own context (whatever was active at start) is no parent.
          received = { trace: fields, context: propagation.extract(ROOT_CONTEXT, fields, getter) };
        } catch {
          return fn();
        }
      }
      return context.with(received.context, fn);
    },
  };
}
