import { type TracePropagation, encodePayload, invalidArgument } from '../core/index.js';
import type { Submission } from '../transport/index.js';
import { type CallSubmission, targetName } from './calls.js';

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
  const timeoutMs = call.options?.timeoutMs ?? defaultTimeoutMs;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw invalidArgument('timeoutMs', `must be a positive number, got ${timeoutMs}`);
  let payload: Uint8Array;
  try {
    payload = encodePayload(call.message);
  } catch (error) {
    throw invalidArgument(
      `${call.kind} ${targetName(call.target)}/${call.packet}`,
      `payload cannot be encoded: ${(error as Error).message}`,
    );
  }
  return {
    packet: call.packet,
    metadata: call.metadata,
    payload,
    trace: tracing?.inject(),
    timeoutMs,
    signal: call.options?.signal,
  };
}
