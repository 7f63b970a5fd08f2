/** What the sessions bench's processes share (bench/sessions.ts). */
export const BENCH_PLAYER_TYPE = 'bench-player';
export const BENCH_SESSIONS_LISTENER = 'bench-players';

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
  readonly actor: string;
  readonly durationMs: number;
  readonly depth: number;
  readonly oneway: boolean;
}

/** Runner → client: open `count` idle sessions (welcomed, bound to nothing), or close them. */
export interface IdleCommand {
  readonly type: 'idle';
  readonly count: number;
}

export interface ThroughputResult {
  readonly perSec: number;
  readonly count: number;
  readonly failed: number;
}
