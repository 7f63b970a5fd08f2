/** What the sessions bench's processes share (bench/sessions.ts). */
export const BENCH_PLAYER_TYPE = 'bench-player';
export const BENCH_SESSIONS_LISTENER = 'bench-players';

/** The listener sockets measured side by side. */
export const BENCH_SESSION_SOCKETS = ['zmq-stream', 'net'] as const;
export type BenchSessionSocket = (typeof BENCH_SESSION_SOCKETS)[number];

/** The gateway's listener on `socket`: one per socket, same handlers. */
export function benchListener(socket: BenchSessionSocket): string {
  return socket === 'zmq-stream' ? BENCH_SESSIONS_LISTENER : `${BENCH_SESSIONS_LISTENER}-${socket}`;
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
