import { Buffer } from 'node:buffer';
import { isStr, packr } from './codec.js';

/**
 * Framework fields: what the framework itself carries with a send or request, apart from the application's
 * metadata (docs/protocol.md#metadata: metadata is never copied onward; trace correlation the framework
 * propagates is a framework field). On the wire they are one optional trailing element of Send, Request,
 * MeshSend and MeshRequest: a msgpack map with short keys, today `tp` (W3C `traceparent`) and `ts`
 * (`tracestate`). A record without them is byte for byte what it was before they existed; a reader ignores
 * keys it does not know, so later versions can add fields.
 */

/** The W3C trace context a record carries (https://www.w3.org/TR/trace-context/). */
export interface TraceFields {
  readonly traceparent: string;
  readonly tracestate: string | undefined;
}

/** Version 00 is 55 characters; room for a later version's extra fields, not for abuse. */
export const MAX_TRACEPARENT_LENGTH = 256;
/** W3C asks vendors to propagate at least 512 characters; a longer tracestate is not sent. */
export const MAX_TRACESTATE_LENGTH = 512;

/**
 * The framework field of a call, encoded once at submit; `undefined` (no field) when the
 * traceparent is empty or too long. A tracestate past its bound is left out, the traceparent kept.
 */
export function encodeFrameworkFields(
  traceparent: string | undefined,
  tracestate: string | undefined,
): Uint8Array | undefined {
  if (!isTraceparent(traceparent)) return undefined;
  // An empty tracestate says nothing: left out like one past its bound.
  return packr.pack(
    tracestate && isTracestate(tracestate) ? { tp: traceparent, ts: tracestate } : { tp: traceparent },
  );
}

/**
 * Reads the framework field of a received record: the trace it carries, or `undefined` when it
 * carries none this side can use (no `tp`, or a `tp`/`ts` of another type or size — a trace must
 * never cost the business message); `false` only when the field is not a plain map, which makes
 * the record malformed.
 */
export function readFrameworkFields(value: unknown): TraceFields | undefined | false {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype)
    return false;
  const { tp, ts } = value as { tp?: unknown; ts?: unknown };
  if (!isTraceparent(tp)) return undefined;
  return { traceparent: tp, tracestate: isTracestate(ts) ? ts : undefined };
}

/**
 * The framework field of a record array whose fields without it number `length`: `undefined` when
 * there is none, `false` when the array has another length or the field is malformed.
 */
export function trailingTrace(v: readonly unknown[], length: number): TraceFields | undefined | false {
  if (v.length === length) return undefined;
  return v.length === length + 1 ? readFrameworkFields(v[length]) : false;
}

/**
 * `record` (a fixarray of fewer than 15 items, as every call record is) with `fields` appended as
 * one more item. For the rare records msgpackr writes (correlations past 32 bits).
 */
export function withFrameworkFields(record: Uint8Array, fields: Uint8Array | undefined): Uint8Array {
  if (fields === undefined) return record;
  const out = Buffer.allocUnsafe(record.length + fields.length);
  out.set(record, 0);
  out.set(fields, record.length);
  out[0] = (record[0] as number) + 1;
  return out;
}

const isTraceparent = (v: unknown): v is string =>
  isStr(v) && v.length > 0 && v.length <= MAX_TRACEPARENT_LENGTH;
const isTracestate = (v: unknown): v is string => isStr(v) && v.length <= MAX_TRACESTATE_LENGTH;

/**
 * Trace propagation, when the application has OpenTelemetry (implemented in lib/runtime; the
 * transport only sees this interface). Absent, records carry no trace and handlers run as before.
 */
export interface TracePropagation {
  /** The encoded framework field of the caller's active trace context; `undefined` when there is none. */
  inject(): Uint8Array | undefined;
  /** Runs `fn` (a handler) inside the trace context a received record carried. */
  run<T>(trace: TraceFields, fn: () => T): T;
}
