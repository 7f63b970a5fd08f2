/** What the relocation bench's processes share (bench/relocation.ts). */
export const BENCH_MOVER_TYPE = 'mover';
export const BENCH_MOVER_SERVERS = ['bench-mover-1', 'bench-mover-2'] as const;

/** Runner → client: measure moves under load, then the cost of one follow hop. */
export interface RelocationCommand {
  readonly type: 'relocation';
  /** How long the load runs without moves (the baseline), then again with moves. */
  readonly durationMs: number;
  /** Pause between one move's end and the next one's start. */
  readonly moveEveryMs: number;
  /** Requests kept outstanding on the moving Spot. */
  readonly depth: number;
  /** Moves sampled for the hop cost (each: one call on the old route, one direct). */
  readonly hopSamples: number;
}

export interface RelocationResultMessage {
  readonly moves: number;
  readonly aborted: number;
  /** Seal to commit, as the source measured it (ms). */
  readonly pauseMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** How long `relocate()` took as the client saw it (ms). */
  readonly relocateMs: { readonly p50: number; readonly p99: number };
  /** Requests/s to the Spot without moves, and over the whole run with moves. */
  readonly baselineReqPerSec: number;
  readonly movingReqPerSec: number;
  /** Requests/s while a move was in progress (between relocate() called and returned). */
  readonly duringMoveReqPerSec: number;
  /** Calls answered with an error (none expected). */
  readonly failed: number;
  /** Sequential request latency p50 (µs) on a route the Spot just left (one Message Follow hop) and direct. */
  readonly detourP50Us: number;
  readonly directP50Us: number;
}
