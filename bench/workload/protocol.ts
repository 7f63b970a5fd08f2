/**
 * How the runner talks to its child processes: a child writes one JSON object per line to stdout
 * (other stdout lines are ignored); the runner writes commands as JSON lines to the child's stdin.
 * A child whose stdin ends (the runner is gone) exits, so a killed runner leaves no orphans.
 */
export interface BenchMessage {
  readonly type: string;
  readonly [key: string]: unknown;
}

export type WorkloadName = 'sequential' | 'pipelined' | 'oneway';

export const WORKLOADS: readonly WorkloadName[] = ['sequential', 'pipelined', 'oneway'];

/** Runner → client: run one workload for `durationMs` (after an unmeasured warm-up of the same). */
export interface RunCommand {
  readonly type: 'run';
  readonly workload: WorkloadName;
  readonly durationMs: number;
  readonly warmupMs: number;
  /** Requests kept outstanding (pipelined). */
  readonly depth: number;
  /** Sends started per event-loop turn (one-way). */
  readonly burst: number;
  /** Sleep before each request (sequential; absent or 0: back to back). */
  readonly idleMs?: number;
  /** Which of a client's targets (bench/systems/harness.ts `targetsProcess`); absent: its only one. */
  readonly target?: string;
}

export interface SequentialResult {
  readonly workload: 'sequential';
  readonly requests: number;
  readonly elapsedMs: number;
  readonly reqPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

export interface PipelinedResult {
  readonly workload: 'pipelined';
  readonly requests: number;
  readonly elapsedMs: number;
  readonly reqPerSec: number;
}

export interface OneWayResult {
  readonly workload: 'oneway';
  /** Sends the client started (all admitted). */
  readonly sent: number;
  /** What the server counted for this run; should equal `sent`. */
  readonly received: number;
  /** From the first send until the server's final count arrived. */
  readonly elapsedMs: number;
  readonly msgsPerSec: number;
  /** From the first send until the last one was admitted. */
  readonly sendPhaseMs: number;
}

/** What the client and the server spent per call (request or send) over a measured run. */
export interface CallCost {
  readonly client: PerCall;
  readonly server: PerCall;
}

export interface PerCall {
  /** Bytes allocated on the JS heap per call. */
  readonly allocBytes: number;
  /** CPU µs (user + system) per call. */
  readonly cpuUs: number;
}

/** A workload's result as the runner keeps it: with the cost per call, where both processes reported it. */
export type WorkloadResult = (SequentialResult | PipelinedResult | OneWayResult) & { cost?: CallCost };

/** Raw zeromq records are `[id, body]`: id > 0 echo request/reply, 0 one-way, < 0 count request/reply. */
export const RAW_ONE_WAY = 0;

export function emit(message: BenchMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/**
 * Calls `onCommand` for each JSON line on stdin, one at a time; a failing command reports
 * `{type:'error'}`. When stdin ends, `onEnd` runs and the process exits.
 */
export function onCommands(
  onCommand: (command: BenchMessage) => Promise<void>,
  onEnd: () => Promise<void>,
): void {
  let buffer = '';
  let chain = Promise.resolve();
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (line.length === 0) continue;
      const command = JSON.parse(line) as BenchMessage;
      chain = chain
        .then(() => onCommand(command))
        .catch((error: unknown) =>
          emit({ type: 'error', command: command.type, message: String((error as Error)?.stack ?? error) }),
        );
    }
  });
  process.stdin.on('end', () => {
    void onEnd().finally(() => process.exit(0));
  });
}

/** A fatal error in a child: report it, then exit non-zero. */
export function fail(error: unknown): never {
  emit({ type: 'fatal', message: String((error as Error)?.stack ?? error) });
  process.exit(1);
}
