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
  /** Each move under load with the answers that came in it (see bench/relocation-phases.ts). */
  readonly windows: readonly MoveWindow[];
}

/**
 * One move under load as the client saw it: `relocate()` called and returned, and when each answer
 * came meanwhile (ms since the epoch: `performance.timeOrigin + performance.now()`, one clock for
 * every process on the machine).
 */
export interface MoveWindow {
  readonly start: number;
  readonly end: number;
  readonly replies: readonly number[];
}

/** A step of a move as a server saw it (its `object_relocation` event), on the same clock. */
export interface MoveMark {
  readonly phase: 'started' | 'relayReady' | 'opened' | 'committed';
  readonly at: number;
}

/** The Spot the load runs on and the moves move. */
export const BENCH_LOAD_SPOT = 'load';

/** Now on the clock every process of the machine shares (ms since the epoch). */
export const epochMs = (): number => performance.timeOrigin + performance.now();
