/**
 * `npm run bench`: ZLink ClientServer through Nest side by side with raw zeromq.js (one record per
 * send, and batched per event-loop turn) and Nest's TCP transport, each as a separate server and
 * client process, plus the selector's cost per call in-process, fanout, and Spot requests next to
 * ChannelName requests on one object server and client (bench/objects.ts). Prints a markdown table and writes
 * bench/results/latest.json. See `--help` (bench/options.ts) for the flags.
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchChild, killChildrenOnExit } from './children.js';
import { LiveSystem } from './live-system.js';
import { log } from './log.js';
import { measureCpuLoad } from './cpu-load.js';
import { renderAllocTop, topAllocations } from './alloc-top.js';
import { machineInfo } from './machine.js';
import { BASELINE_SYSTEMS, type BenchOptions, parseOptions } from './options.js';
import { type BaselineBuild, buildBaseline } from './baseline.js';
import { payloadSize } from './workload/payload.js';
import { renderTop, topSelfTime } from './profile-top.js';
import { renderMarkdown } from './markdown.js';
import { type BenchReport, buildReport } from './report.js';
import type { SelectorRow } from './selector.js';
import { runFanout } from './fanout.js';
import { runObjects } from './objects.js';
import { relocationMarkdown, runRelocation } from './relocation.js';
import { summarizeObjects } from './objects-report.js';
import { runSessions, sessionsMarkdown } from './sessions.js';
import { multicastMarkdown, runMulticast } from './multicast.js';
import { runDurable } from './durable.js';
import { durableMarkdown } from './durable-report.js';
import { runScale } from './scale.js';
import { scaleMarkdown } from './scale-report.js';

const HERE = dirname(fileURLToPath(import.meta.url)); // .bench-build/bench
const ROOT = join(HERE, '..', '..');
const RESULTS = join(ROOT, 'bench', 'results');
const PROFILES = join(RESULTS, 'profiles');

const STOP_GRACE_MS = 5_000;
const SELECTOR_TIMEOUT_MS = 180_000;

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

/** Top 10 self-time functions or allocation sites of every profile this run wrote. */
function profileSummary(since: number): string {
  const files = readdirSync(PROFILES)
    .filter((f) => /\.(cpu|heap)profile$/.test(f) && statSync(join(PROFILES, f)).mtimeMs >= since)
    .sort();
  return files
    .map((f) => {
      const [title, file] = [`bench/results/profiles/${f}`, join(PROFILES, f)];
      return f.endsWith('.cpuprofile')
        ? renderTop(title, topSelfTime(file))
        : renderAllocTop(title, topAllocations(file));
    })
    .join('\n');
}

/**
 * Each system, and right after each ZLink one its `--baseline` build: the rotation then mostly runs
 * the two back to back, so a drift in the machine's load reaches both alike.
 */
function liveSystems(options: BenchOptions, baseline: BaselineBuild | undefined): LiveSystem[] {
  return options.systems.flatMap((name) => {
    const live = new LiveSystem(name, options, PROFILES, join(HERE, 'systems'));
    if (!baseline || !BASELINE_SYSTEMS.includes(name)) return [live];
    return [live, new LiveSystem(name, options, PROFILES, baseline.scriptDir, baseline.short)];
  });
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
  let baseline: BaselineBuild | undefined;
  if (options.baseline !== undefined) {
    try {
      // Before the CPU load is measured: compiling is not the bench.
      baseline = await buildBaseline(options.baseline, ROOT, log);
    } catch (error) {
      log(`baseline FAILED: ${(error as Error).message}`);
      return 1;
    }
  }
  try {
    return await runBench(started, options, baseline);
  } finally {
    baseline?.remove();
  }
}

async function runBench(
  started: number,
  options: BenchOptions,
  baseline: BaselineBuild | undefined,
): Promise<number> {
  const cpuLoad = measureCpuLoad();
  const payloadBytes = payloadSize();
  const machine = machineInfo();
  const repMs = options.durationMs / options.reps;
  log(
    `payload: ${payloadBytes.msgpack} bytes msgpack; ${options.reps} × ${repMs / 1000} s per workload and system`,
  );
  if (options.profile) mkdirSync(PROFILES, { recursive: true });

  // Start every system first (one at a time), then interleave them run by run.
  const systems = liveSystems(options, baseline);
  for (const live of systems) await live.start();
  for (let rep = 0; rep < options.reps; rep++) {
    for (const workload of options.workloads) {
      // Rotate the order each repetition so no system always runs first (or right after another).
      const order = systems.map((_, i) => systems[(i + rep) % systems.length] as LiveSystem);
      for (const live of order) {
        await live.run(workload, rep, repMs);
      }
    }
  }
  for (const live of systems) await live.stop();

  const selector = options.selector ? await runSelector(options) : undefined;
  const fanout = options.fanout ? await runFanout(join(HERE, 'systems'), repMs, options.reps) : undefined;
  if (fanout && !Array.isArray(fanout)) log(`fanout FAILED: ${fanout.error}`);
  const objectRuns = options.objects
    ? await runObjects(join(HERE, 'systems'), options, repMs, PROFILES)
    : undefined;
  const objects = objectRuns && ('error' in objectRuns ? objectRuns : summarizeObjects(objectRuns));
  const report: BenchReport = buildReport(
    machine,
    { ...options, repMs, payloadBytes },
    systems.map((s) => s.runs),
    selector,
    fanout,
    baseline && { rev: baseline.rev, commit: baseline.commit, short: baseline.short },
    objects,
  );
  if (options.relocation) {
    report.relocation = await runRelocation(join(HERE, 'systems'), options.durationMs / 2);
    if ('error' in report.relocation) log(`relocation FAILED: ${report.relocation.error}`);
  }
  if (options.sessions) {
    report.sessions = await runSessions(join(HERE, 'systems'), {
      repMs,
      reps: options.reps,
      idleCounts: options.sessionIdle,
      quick: options.quick,
    });
    if ('error' in report.sessions) log(`sessions FAILED: ${report.sessions.error}`);
  }
  if (options.multicast) {
    report.multicast = await runMulticast(join(HERE, 'systems'), repMs, options.reps);
    if ('error' in report.multicast) log(`multicast FAILED: ${report.multicast.error}`);
  }
  if (options.durable) {
    const { reps, warmupMs, depth, workloads, quick } = options;
    const settings = { repMs, reps, warmupMs, depth, workloads, quick };
    report.durable = await runDurable(join(HERE, 'systems'), settings);
    if ('error' in report.durable) log(`durable FAILED: ${report.durable.error}`);
  }
  if (options.scale) {
    report.scale = await runScale(join(HERE, 'systems'), options.quick);
    if ('error' in report.scale) log(`scale FAILED: ${report.scale.error}`);
  }
  report.wallTimeMs = Date.now() - started;
  report.cpuLoad = cpuLoad();
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(renderMarkdown(report));
  if (report.relocation) process.stdout.write(`\n${relocationMarkdown(report.relocation).join('\n')}`);
  if (report.sessions) process.stdout.write(`\n${sessionsMarkdown(report.sessions).join('\n')}`);
  if (report.multicast) process.stdout.write(`\n${multicastMarkdown(report.multicast).join('\n')}`);
  if (report.durable) process.stdout.write(`\n${durableMarkdown(report.durable, machine).join('\n')}`);
  if (report.scale) process.stdout.write(`\n${scaleMarkdown(report.scale, machine).join('\n')}`);
  process.stdout.write(
    `\nWall time ${(report.wallTimeMs / 1000).toFixed(1)} s. Results: bench/results/latest.json\n`,
  );
  if (options.profile) process.stdout.write(`\n${profileSummary(started)}`);
  const failed =
    systems.some((s) => s.runs.error) ||
    (selector !== undefined && !Array.isArray(selector)) ||
    (fanout !== undefined && !Array.isArray(fanout)) ||
    (objects !== undefined && 'error' in objects) ||
    (report.relocation !== undefined && 'error' in report.relocation) ||
    (report.sessions !== undefined && 'error' in report.sessions) ||
    (report.multicast !== undefined && 'error' in report.multicast) ||
    (report.durable !== undefined && 'error' in report.durable) ||
    (report.scale !== undefined && 'error' in report.scale);
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
