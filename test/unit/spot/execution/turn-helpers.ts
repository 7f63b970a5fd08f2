import type { ObjectKey } from '../../../../lib/core/index.js';

/** Test helpers for the object turn queue: gates a turn waits on, and settle tracking. */

export interface Gate {
  readonly opened: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Lets queued promise reactions run (no timers involved). */
export async function flush(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

export const spot = (id: string): ObjectKey => ({ mesh: 'game', kind: 'spot', id });

/** How a promise ended, readable without awaiting it. */
export interface Outcome<T> {
  settled: number;
  value?: T;
  error?: unknown;
}

export function track<T>(p: Promise<T>): Outcome<T> {
  const out: Outcome<T> = { settled: 0 };
  p.then(
    (value) => {
      out.settled++;
      out.value = value;
    },
    (error: unknown) => {
      out.settled++;
      out.error = error;
    },
  );
  return out;
}
