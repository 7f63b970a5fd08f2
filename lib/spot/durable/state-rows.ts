import { Buffer } from 'node:buffer';
import type { StateWriteResult } from '../../core/ports/index.js';
import { decodePayload, encodePayload } from '../../core/wire/index.js';
import type { DurableTimer } from '../execution/index.js';

/*
 * What a durable object's State Store row holds, as its owner reads and compares it
 * (docs/decisions.md#durable-state): the state's bytes, and the durable timers beside them — one msgpack
 * array of `[kind, label, anchorAt, intervalMs | null]`, in the order they were armed.
 */

/** Durable timers as a state row keeps them: `[[kind, label, anchorAt, intervalMs | null], ...]`. */
export function encodeTimers(timers: readonly DurableTimer[]): Uint8Array | undefined {
  if (timers.length === 0) return undefined;
  return encodePayload(timers.map((t) => [t.kind, t.label, t.anchorAt, t.intervalMs ?? null]));
}

/** The durable timers a state row kept, or `undefined` when its bytes are not that. */
export function decodeTimers(bytes: Uint8Array | undefined): DurableTimer[] | undefined {
  if (bytes === undefined) return [];
  const decoded = decodePayload(bytes);
  if (!decoded.ok || !Array.isArray(decoded.value)) return undefined;
  const out: DurableTimer[] = [];
  for (const t of decoded.value as unknown[]) {
    if (!Array.isArray(t) || t.length < 4) return undefined;
    const [kind, label, anchorAt, intervalMs] = t as unknown[];
    if ((kind !== 'timeout' && kind !== 'interval') || typeof label !== 'string' || label === '')
      return undefined;
    if (typeof anchorAt !== 'number' || !Number.isFinite(anchorAt)) return undefined;
    if (kind === 'interval' ? typeof intervalMs !== 'number' || !(intervalMs >= 1) : intervalMs !== null)
      return undefined;
    out.push({ kind, label, anchorAt, intervalMs: kind === 'interval' ? (intervalMs as number) : undefined });
  }
  return out;
}

/** Whether two encodings are the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** A refused write's reason, in words. */
export function describeRefusal(result: Exclude<StateWriteResult, { ok: true }>): string {
  switch (result.reason) {
    case 'fenced':
      return `another owner holds epoch ${result.epoch}`;
    case 'version':
      return `the row is at version ${result.version}`;
    case 'absent':
      return 'no row';
    default:
      return result.error.message;
  }
}

/** Whether two timer encodings (either may be absent: no durable timers) are the same. */
export function sameTimers(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  return a === undefined || b === undefined ? a === b : sameBytes(a, b);
}
