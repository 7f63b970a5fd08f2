import type { Activation } from './activation.js';

/** A timer an object comes back with, placed: when it fires first, and whether it stays durable. */
export interface RearmedTimer {
  readonly kind: 'timeout' | 'interval';
  readonly label: string | undefined;
  readonly intervalMs: number | undefined;
  /** Until its first firing here. */
  readonly dueMs: number;
  /** Set: saved with the state from now on, first firing anchored at this wall-clock time. */
  readonly durable: { readonly anchorAt: number } | undefined;
}

/**
 * Sets again the timers an object comes back with (a move's image, a saved state row), each as a call of
 * the method its label names — a callback cannot travel or be saved. One whose label names no method, or
 * that `restore()` already set again itself (same label), is skipped.
 */
export function rearmTimers(a: Activation, timers: readonly RearmedTimer[]): void {
  if (timers.length === 0) return;
  const instance = a.instance as Record<string, unknown>;
  const live = new Set(a.turns.timers.pending().map((t) => t.label));
  for (const t of timers) {
    const method = t.label === undefined ? undefined : instance[t.label];
    if (typeof method !== 'function' || live.has(t.label)) continue;
    const run = () => method.call(instance) as void;
    a.turns.timers.restore(t.kind, run, t.dueMs, t.intervalMs, t.label, t.durable);
  }
}
