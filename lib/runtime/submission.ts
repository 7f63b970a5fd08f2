import { invalidArgument } from '../core/errors.js';
import { type TracePropagation, encodePayload } from '../core/wire/index.js';
import type { Submission } from '../transport/index.js';
import type { ObjectSubmission } from '../spot/index.js';
import { type CallSubmission, type CallTarget, targetName } from './calls.js';

/**
 * What the transport gets for a call, built in the caller's turn: the deadline checked, the payload
 * encoded once, and — when OpenTelemetry is loaded — the caller's active trace context as the
 * encoded framework field (never metadata). Throws `InvalidArgument` for a bad timeout or a payload
 * that cannot be encoded.
 */
export function toSubmission(
  call: CallSubmission,
  defaultTimeoutMs: number,
  tracing: TracePropagation | undefined,
): Submission {
  const timeoutMs = timeoutOf(call, defaultTimeoutMs);
  return {
    packet: call.packet,
    metadata: call.metadata,
    payload: payloadOf(call),
    trace: tracing?.inject(),
    timeoutMs,
    signal: call.options?.signal,
  };
}

/**
 * The same for a call by global id: one object with the call's own fields and the target's, checked
 * and encoded as `toSubmission` does, handed to the object layer as it is (no second copy per call).
 */
export function toObjectSubmission(
  call: CallSubmission,
  target: CallTarget & { kind: 'object' },
  defaultTimeoutMs: number,
  tracing: TracePropagation | undefined,
): ObjectSubmission {
  const timeoutMs = timeoutOf(call, defaultTimeoutMs);
  return {
    packet: call.packet,
    metadata: call.metadata,
    payload: payloadOf(call),
    trace: tracing?.inject(),
    timeoutMs,
    signal: call.options?.signal,
    messageKind: call.kind,
    objectKind: target.objectKind,
    id: target.id,
    instance: target.instance,
  };
}

function timeoutOf(call: CallSubmission, defaultTimeoutMs: number): number {
  const timeoutMs = call.options?.timeoutMs ?? defaultTimeoutMs;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw invalidArgument('timeoutMs', `must be a positive number, got ${timeoutMs}`);
  return timeoutMs;
}

function payloadOf(call: CallSubmission): Uint8Array {
  try {
    return encodePayload(call.message);
  } catch (error) {
    throw invalidArgument(
      `${call.kind} ${targetName(call.target)}/${call.packet}`,
      `payload cannot be encoded: ${(error as Error).message}`,
    );
  }
}
