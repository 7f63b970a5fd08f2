/** What the sessions bench's processes share (bench/sessions.ts). */
export const BENCH_PLAYER_TYPE = 'bench-player';
export const BENCH_SESSIONS_LISTENER = 'bench-players';

/**
 * The session listener kinds measured side by side (`sessions.<name>.listen[].kind`): one column each
 * in the table. The ZeroMQ STREAM listener they were measured against is gone (docs/decisions.md).
 */
export const BENCH_SESSION_KINDS = ['tcp'] as const;
export type BenchSessionKind = (typeof BENCH_SESSION_KINDS)[number];

/** The gateway's listener of `kind`: one per kind, same handlers. */
export function benchListener(kind: BenchSessionKind): string {
  return `${BENCH_SESSIONS_LISTENER}-${kind}`;
}

/** Runner → gateway: requests straight to the Actor (`toActor`), `depth` outstanding. */
export interface DirectCommand {
  readonly type: 'direct';
  readonly actor: string;
  readonly durationMs: number;
  readonly depth: number;
}

/** Runner → client: a session bound to `actor`, then pipelined requests or one-way sends through it. */
export interface RelayCommand {
  readonly type: 'relay';
  /** The gateway's port for the listener measured. */
  readonly port: number;
  readonly actor: string;
  readonly durationMs: number;
  readonly depth: number;
  readonly oneway: boolean;
}

/** Runner → client: open `count` idle sessions (welcomed, bound to nothing), or close them. */
export interface IdleCommand {
  readonly type: 'idle';
  readonly port: number;
  readonly count: number;
}

export interface ThroughputResult {
  readonly perSec: number;
  readonly count: number;
  readonly failed: number;
}
