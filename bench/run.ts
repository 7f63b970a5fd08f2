/**
 * `npm run bench`: ZLink ClientServer through Nest side by side with raw zeromq.js (one record per
 * send, and batched per event-loop turn) and Nest's TCP transport, each as a separate server and
 * client process, plus the selector's cost per call in-process. Prints a markdown table and writes
 * bench/results/latest.json. See `--help` (bench/options.ts) for the flags.
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchChild, killChildrenOnExit } from './children.js';
import { measureCpuLoad } from './cpu-load.js';
import { machineInfo } from './machine.js';
import { type BenchOptions, type SystemName, parseOptions } from './options.js';
import { payloadSize } from './payload.js';
import { renderTop, topSelfTime } from './profile-top.js';
import type { BenchMessage, WorkloadName, WorkloadResult } from './protocol.js';
import { type BenchReport, SYSTEM_LABELS, type SystemRuns, buildReport, renderMarkdown } from './report.js';
import type { SelectorRow } from './selector.js';

const HERE = dirname(fileURLToPath(import.meta.url)); // .bench-build/bench
const RESULTS = join(HERE, '..', '..', 'bench', 'results');
const PROFILES = join(RESULTS, 'profiles');

const STARTUP_TIMEOUT_MS = 30_000;
/** Beyond its duration and warm-up, what a run may take (a one-way count waits for the backlog). */
const RUN_SLACK_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const SELECTOR_TIMEOUT_MS = 180_000;

interface Role {
  readonly script: string;
  readonly args: string[];
}

const SPECS: Record<SystemName, { server: Role; client: Role }> = {
  zlink: { server: { script: 'zlink-server', args: [] }, client: { script: 'zlink-client', args: [] } },
  raw: {
    server: { script: 'raw-zmq-server', args: ['single'] },
    client: { script: 'raw-zmq-client', args: ['single'] },
  },
  'raw-batched': {
    server: { script: 'raw-zmq-server', args: ['batched'] },
    client: { script: 'raw-zmq-client', args: ['batched'] },
  },
  'nest-tcp': {
    server: { script: 'nest-tcp-server', args: [] },
    client: { script: 'nest-tcp-client', args: [] },
  },
};

interface LiveSystem {
  readonly runs: SystemRuns;
  server?: BenchChild;
  client?: BenchChild;
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);

function spawnRole(name: SystemName, role: 'server' | 'client', env = {}): BenchChild {
  const { script, args } = SPECS[name][role];
  return new BenchChild(`${name} ${role}`, join(HERE, 'systems', `${script}.js`), { args, env });
}

async function startSystem(name: SystemName): Promise<LiveSystem> {
  const live: LiveSystem = { runs: { name, runs: {} } };
  try {
    live.server = spawnRole(name, 'server');
    const ready = await live.server.next('ready', STARTUP_TIMEOUT_MS);
    const endpoint = String(ready.endpoint);
    live.client = spawnRole(name, 'client', { BENCH_ENDPOINT: endpoint });
    await live.client.next('ready', STARTUP_TIMEOUT_MS);
    log(`${SYSTEM_LABELS[name]}: server ${endpoint} (pid ${live.server.pid}), client pid ${live.client.pid}`);
  } catch (error) {
    await failSystem(live, error);
  }
  return live;
}

async function failSystem(live: LiveSystem, error: unknown): Promise<void> {
  live.runs.error = String((error as Error)?.message ?? error);
  log(`${SYSTEM_LABELS[live.runs.name]} FAILED: ${live.runs.error}`);
  await stopSystem(live);
}

async function stopSystem(live: LiveSystem): Promise<void> {
  await live.client?.stop(STOP_GRACE_MS);
  await live.server?.stop(STOP_GRACE_MS);
  live.client = undefined;
  live.server = undefined;
}

function describe(result: WorkloadResult): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  switch (result.workload) {
    case 'sequential':
      return `${n(result.reqPerSec)} req/s, p50 ${result.p50Us.toFixed(1)} µs, p99 ${result.p99Us.toFixed(1)} µs`;
    case 'pipelined':
      return `${n(result.reqPerSec)} req/s`;
    case 'oneway':
      return `${n(result.msgsPerSec)} msgs/s (sent ${n(result.sent)}, received ${n(result.received)}, sends took ${n(result.sendPhaseMs)} ms, all received after ${n(result.elapsedMs)} ms)`;
  }
}

/** Both processes of a system run a command (built per role), then report `reply`. */
async function both(
  live: LiveSystem,
  command: (role: 'server' | 'client') => BenchMessage,
  reply: string,
): Promise<void> {
  const roles = [
    ['server', live.server],
    ['client', live.client],
  ] as const;
  for (const [role, child] of roles) child?.command(command(role));
  await Promise.all(roles.map(([, child]) => child?.next(reply, STARTUP_TIMEOUT_MS)));
}

interface RunPlan {
  readonly workload: WorkloadName;
  readonly rep: number;
  readonly repMs: number;
  readonly options: BenchOptions;
}

/**
 * One measured run of a workload on a system (after a warm-up on the first repetition; with
 * `--cpu-prof`, the first repetition's measured run is profiled in both processes).
 */
async function runOne(live: LiveSystem, { workload, rep, repMs, options }: RunPlan): Promise<void> {
  const run = async (durationMs: number): Promise<WorkloadResult> => {
    const client = live.client as BenchChild;
    client.command({
      type: 'run',
      workload,
      durationMs,
      warmupMs: 0,
      depth: options.depth,
      burst: options.burst,
    });
    return (await client.next('result', durationMs + RUN_SLACK_MS)).result as WorkloadResult;
  };
  if (!live.client) return;
  try {
    if (rep === 0) await run(options.warmupMs);
    const profile = options.cpuProf && rep === 0;
    if (profile) await both(live, () => ({ type: 'profile-start' }), 'profiling');
    const result = await run(repMs);
    if (profile) {
      const file = (role: string) => join(PROFILES, `${live.runs.name}-${workload}-${role}.cpuprofile`);
      await both(live, (role) => ({ type: 'profile-stop', file: file(role) }), 'profiled');
    }
    (live.runs.runs[workload] ??= []).push(result);
    const label = `[${rep + 1}/${options.reps}] ${workload.padEnd(10)} ${SYSTEM_LABELS[live.runs.name].padEnd(24)}`;
    log(`${label} ${describe(result)}`);
  } catch (error) {
    await failSystem(live, error);
  }
}

async function runSelector(options: BenchOptions): Promise<SelectorRow[] | { error: string }> {
  const child = new BenchChild('selector', join(HERE, 'selector.js'), {
    args: options.quick ? ['--quick'] : [],
  });
  try {
    const message = await child.next('result', SELECTOR_TIMEOUT_MS);
    return message.rows as SelectorRow[];
  } catch (error) {
    log(`selector FAILED: ${String(error)}`);
    return { error: String((error as Error)?.message ?? error) };
  } finally {
    await child.stop(STOP_GRACE_MS);
  }
}

/** Top 10 self-time functions of every profile this run wrote. */
function profileSummary(since: number): string {
  const files = readdirSync(PROFILES)
    .filter((f) => f.endsWith('.cpuprofile') && statSync(join(PROFILES, f)).mtimeMs >= since)
    .sort();
  return files
    .map((f) => renderTop(`bench/results/profiles/${f}`, topSelfTime(join(PROFILES, f))))
    .join('\n');
}

async function main(): Promise<number> {
  const started = Date.now();
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    log((error as Error).message);
    return 2;
  }
  const cpuLoad = measureCpuLoad();
  const payloadBytes = payloadSize();
  const machine = machineInfo();
  const repMs = options.durationMs / options.reps;
  log(
    `payload: ${payloadBytes.msgpack} bytes msgpack; ${options.reps} × ${repMs / 1000} s per workload and system`,
  );
  if (options.cpuProf) mkdirSync(PROFILES, { recursive: true });

  // Start every system first (one at a time), then interleave them run by run.
  const systems: LiveSystem[] = [];
  for (const name of options.systems) systems.push(await startSystem(name));
  for (let rep = 0; rep < options.reps; rep++) {
    for (const workload of options.workloads) {
      // Rotate the order each repetition so no system always runs first (or right after another).
      const order = systems.map((_, i) => systems[(i + rep) % systems.length] as LiveSystem);
      for (const live of order) {
        await runOne(live, { workload, rep, repMs, options });
      }
    }
  }
  for (const live of systems) await stopSystem(live);

  const selector = options.selector ? await runSelector(options) : undefined;
  const report: BenchReport = buildReport(
    machine,
    { ...options, repMs, payloadBytes },
    systems.map((s) => s.runs),
    selector,
  );
  report.wallTimeMs = Date.now() - started;
  report.cpuLoad = cpuLoad();
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(renderMarkdown(report));
  process.stdout.write(
    `\nWall time ${(report.wallTimeMs / 1000).toFixed(1)} s. Results: bench/results/latest.json\n`,
  );
  if (options.cpuProf) process.stdout.write(`\n${profileSummary(started)}`);
  const failed = systems.some((s) => s.runs.error) || (selector !== undefined && !Array.isArray(selector));
  return failed ? 1 : 0;
}

killChildrenOnExit();
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(String((error as Error)?.stack ?? error));
    process.exit(1);
  },
);
