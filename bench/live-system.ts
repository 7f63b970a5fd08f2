import { join } from 'node:path';
import { zlinkKeyPair } from '../lib/index.js';
import { BenchChild } from './children.js';
import { type BenchOptions, PROFILE_EXTENSION, type SystemName } from './options.js';
import type { BenchMessage, CallCost, PerCall, WorkloadName, WorkloadResult } from './workload/protocol.js';
import { log } from './log.js';
import type { ProcessCost } from './systems/call-cost.js';
import { type SystemRuns, systemKey, systemLabel } from './system-runs.js';

const STARTUP_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

interface Role {
  readonly script: string;
  readonly args: string[];
}

const SPECS: Record<SystemName, { server: Role; client: Role }> = {
  zlink: { server: { script: 'zlink-server', args: [] }, client: { script: 'zlink-client', args: [] } },
  // ClientServer with `security.curve` on both sides.
  'zlink-curve': {
    server: { script: 'zlink-server', args: ['curve'] },
    client: { script: 'zlink-client', args: ['curve'] },
  },
  mesh: {
    server: { script: 'zlink-mesh-server', args: [] },
    client: { script: 'zlink-mesh-client', args: ['channel'] },
  },
  'mesh-node': {
    server: { script: 'zlink-mesh-server', args: [] },
    client: { script: 'zlink-mesh-client', args: ['node'] },
  },
  // The same with `security.curve` on both nodes (keys made here, for this run: BENCH_CURVE).
  'mesh-node-curve': {
    server: { script: 'zlink-mesh-server', args: ['curve'] },
    client: { script: 'zlink-mesh-client', args: ['node', 'curve'] },
  },
  raw: {
    server: { script: 'raw-zmq-server', args: ['single'] },
    client: { script: 'raw-zmq-client', args: ['single'] },
  },
  'raw-batched': {
    server: { script: 'raw-zmq-server', args: ['batched'] },
    client: { script: 'raw-zmq-client', args: ['batched'] },
  },
  // The same with ZLink's payload envelope: the floor of a framework that carries payloads opaque.
  'raw-framed': {
    server: { script: 'raw-zmq-server', args: ['batched', 'framed'] },
    client: { script: 'raw-zmq-client', args: ['batched', 'framed'] },
  },
  'nest-tcp': {
    server: { script: 'nest-tcp-server', args: [] },
    client: { script: 'nest-tcp-client', args: [] },
  },
};

/** Key pairs of the CURVE bench nodes, made once per bench run. */
const BENCH_CURVE = JSON.stringify({ server: zlinkKeyPair(), client: zlinkKeyPair() });

/** A run may take its duration twice over plus this (a one-way count waits for the server's backlog). */
const runTimeout = (durationMs: number): number => 10_000 + 2 * durationMs;

function describe(result: WorkloadResult): string {
  const { cost } = result;
  if (!cost) return describeRate(result);
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  return (
    `${describeRate(result)}; per call: heap ${n(cost.client.allocBytes)} B client, ` +
    `${n(cost.server.allocBytes)} B server, CPU ${(cost.client.cpuUs + cost.server.cpuUs).toFixed(2)} µs`
  );
}

function describeRate(result: WorkloadResult): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  switch (result.workload) {
    case 'sequential':
      return `${n(result.reqPerSec)} req/s, p50 ${result.p50Us.toFixed(1)} µs, p99 ${result.p99Us.toFixed(1)} µs`;
    case 'pipelined':
      return `${n(result.reqPerSec)} req/s`;
    case 'oneway':
      return (
        `${n(result.msgsPerSec)} msgs/s (sent ${n(result.sent)}, received ${n(result.received)}, ` +
        `sends took ${n(result.sendPhaseMs)} ms, all received after ${n(result.elapsedMs)} ms)`
      );
  }
}

/**
 * One system's server and client processes. A run that fails (a child crashed, reported an error
 * or timed out) is recorded, both processes are killed, and the next run starts fresh ones (with
 * a warm-up again); a system that cannot start is given up.
 */
export class LiveSystem {
  readonly runs: SystemRuns;
  private server: BenchChild | undefined;
  private client: BenchChild | undefined;
  /** Workloads warmed up in the current processes. */
  private readonly warmed = new Set<WorkloadName>();
  /** Whether these children count their costs per call (a `--baseline` build may be older). */
  private costs = true;

  /**
   * `scriptDir` holds the compiled bench/systems scripts to run; `baseline` is the short revision
   * they were built from when they are a `--baseline` build (bench/baseline.ts).
   */
  constructor(
    readonly name: SystemName,
    private readonly options: BenchOptions,
    private readonly profileDir: string,
    private readonly scriptDir: string,
    baseline?: string,
  ) {
    this.runs = { name, ...(baseline === undefined ? {} : { baseline }), runs: {}, failures: [] };
  }

  private get label(): string {
    return systemLabel(this.runs);
  }

  /** Starts the server, then the client against the endpoint the server reported. */
  async start(): Promise<boolean> {
    if (this.runs.error !== undefined) return false;
    try {
      this.server = this.spawn('server');
      const endpoint = String((await this.server.next('ready', STARTUP_TIMEOUT_MS)).endpoint);
      this.client = this.spawn('client', { BENCH_ENDPOINT: endpoint });
      await this.client.next('ready', STARTUP_TIMEOUT_MS);
      this.warmed.clear();
      log(`${this.label}: server ${endpoint} (pid ${this.server.pid}), client pid ${this.client.pid}`);
      return true;
    } catch (error) {
      this.runs.error = `could not start: ${message(error)}`;
      log(`${this.label} FAILED: ${this.runs.error}`);
      await this.stop();
      return false;
    }
  }

  async stop(): Promise<void> {
    await this.client?.stop(STOP_GRACE_MS);
    await this.server?.stop(STOP_GRACE_MS);
    this.client = undefined;
    this.server = undefined;
  }

  /**
   * One measured run of `workload` (after a warm-up the first time these processes run it; with
   * `--cpu-prof` or `--alloc-prof`, the first repetition's measured run is profiled in both processes).
   */
  async run(workload: WorkloadName, rep: number, repMs: number): Promise<void> {
    if (!this.client && !(await this.start())) return;
    try {
      if (!this.warmed.has(workload)) {
        await this.measure(workload, this.options.warmupMs);
        this.warmed.add(workload);
      }
      const profile = rep === 0 ? this.options.profile : undefined;
      if (profile) await this.both(() => ({ type: 'profile-start', kind: profile }), 'profiling');
      const costing = await this.startCost();
      const measured = await this.measure(workload, repMs);
      let result = measured;
      if (costing) {
        const [server, client] = await this.both(() => ({ type: 'cost-stop' }), 'cost');
        result = { ...measured, cost: perCall(measured, client?.cost, server?.cost) };
      }
      if (profile) {
        const file = (role: string) =>
          join(this.profileDir, `${systemKey(this.runs)}-${workload}-${role}${PROFILE_EXTENSION[profile]}`);
        await this.both((role) => ({ type: 'profile-stop', file: file(role) }), 'profiled');
      }
      (this.runs.runs[workload] ??= []).push(result);
      log(
        `[${rep + 1}/${this.options.reps}] ${workload.padEnd(10)} ${this.label.padEnd(24)} ${describe(result)}`,
      );
    } catch (error) {
      this.runs.failures.push({ rep: rep + 1, workload, error: message(error) });
      log(`[${rep + 1}/${this.options.reps}] ${workload.padEnd(10)} ${this.label} FAILED: ${message(error)}`);
      await this.stop(); // the next run starts fresh processes
    }
  }

  /**
   * Both processes start counting what the run costs (call-cost.ts); false for a `--baseline` build
   * from before the bench counted costs (its children answer `cost-start` with an error).
   */
  private async startCost(): Promise<boolean> {
    if (!this.costs) return false;
    const replies = await Promise.allSettled(
      [this.server, this.client].map((child) => {
        child?.command({ type: 'cost-start' });
        return child?.next('costing', STARTUP_TIMEOUT_MS);
      }),
    );
    const failed = replies.find((r) => r.status === 'rejected');
    if (failed === undefined) return true;
    if (this.runs.baseline === undefined) throw failed.reason;
    this.costs = false;
    log(`${this.label}: this build counts no cost per call`);
    return false;
  }

  private async measure(workload: WorkloadName, durationMs: number): Promise<WorkloadResult> {
    const client = this.client as BenchChild;
    const { depth, burst, idleMs } = this.options;
    client.command({ type: 'run', workload, durationMs, warmupMs: 0, depth, burst, idleMs });
    return (await client.next('result', runTimeout(durationMs))).result as WorkloadResult;
  }

  /** Both processes run a command (built per role), then report `reply`: [server's, client's]. */
  private async both(
    command: (role: 'server' | 'client') => BenchMessage,
    reply: string,
  ): Promise<(BenchMessage | undefined)[]> {
    const roles = [
      ['server', this.server],
      ['client', this.client],
    ] as const;
    for (const [role, child] of roles) child?.command(command(role));
    return Promise.all(roles.map(([, child]) => child?.next(reply, STARTUP_TIMEOUT_MS)));
  }

  private spawn(role: 'server' | 'client', env: Record<string, string> = {}): BenchChild {
    const { script, args } = SPECS[this.name][role];
    return new BenchChild(`${systemKey(this.runs)} ${role}`, join(this.scriptDir, `${script}.js`), {
      args,
      env: { ...env, BENCH_CURVE },
    });
  }
}

/** The two processes' costs over a run, per request (or per send, one-way). */
export function perCall(result: WorkloadResult, client: unknown, server: unknown): CallCost {
  const calls = result.workload === 'oneway' ? result.sent : result.requests;
  const per = (cost: unknown): PerCall => {
    const { allocBytes, cpuUs } = cost as ProcessCost;
    return { allocBytes: allocBytes / calls, cpuUs: cpuUs / calls };
  };
  return { client: per(client), server: per(server) };
}

function message(error: unknown): string {
  return String((error as Error)?.message ?? error);
}
