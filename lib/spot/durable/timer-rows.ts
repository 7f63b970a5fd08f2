import { decodePayload, encodePayload } from '../../core/wire/index.js';
import type { DurableTimer } from '../execution/index.js';

/*
 * Durable timers as a State Store row keeps them, beside the state (docs/decisions.md#durable-state):
 * one msgpack array of `[kind, label, anchorAt, intervalMs | null]`, in the order they were armed.
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
