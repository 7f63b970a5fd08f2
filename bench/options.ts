import { WORKLOADS, type WorkloadName } from './workload/protocol.js';
import type { ProfileKind } from './systems/profiler.js';

/** The file a profile of `kind` is written to, as DevTools names them. */
export const PROFILE_EXTENSION: Record<ProfileKind, string> = { cpu: '.cpuprofile', alloc: '.heapprofile' };

export const SYSTEM_NAMES = [
  'zlink',
  'mesh',
  'mesh-node',
  'mesh-node-curve',
  'zlink-curve',
  'raw',
  'raw-batched',
  'raw-framed',
  'nest-tcp',
] as const;
export type SystemName = (typeof SYSTEM_NAMES)[number];
/**
 * Everything `--only` accepts: the socket systems, the in-process selector, the fanout pair, the
 * objects pair (Spots next to ChannelName, bench/objects.ts) and the other parts, each in its own file.
 */
const PARTS = [
  ...SYSTEM_NAMES,
  'selector',
  'fanout',
  'objects',
  'relocation',
  'sessions',
  'multicast',
  'durable',
  'scale',
] as const;

/** What a run without `--only` runs: everything but the long scale part (`--scale`). */
const DEFAULT_PARTS = PARTS.filter((p) => p !== 'scale');

export interface BenchOptions {
  /** Measured time per workload and system, split over `reps` repetitions. */
  readonly durationMs: number;
  readonly reps: number;
  /** Unmeasured run before the first repetition of each workload. */
  readonly warmupMs: number;
  readonly systems: readonly SystemName[];
  readonly selector: boolean;
  /** Run the fanout comparison (ZLink fanout and raw PUB→SUB, each as two processes). */
  readonly fanout: boolean;
  /** Run Spot requests next to ChannelName requests on one object server and client (private Redis). */
  readonly objects: boolean;
  /** Relocation under load (bench/relocation.ts). */
  readonly relocation: boolean;
  /** Sessions: relayed against direct, one-way relay, memory per idle session (bench/sessions.ts). */
  readonly sessions: boolean;
  /** Logical Multicast: delivery across nodes, publish cost per audience, classic fanout beside (bench/multicast.ts). */
  readonly multicast: boolean;
  /**
   * Durable objects: Spot calls with every-turn persistence against none, writes, bytes per saved object
   * and restore time, on Redis and PostgreSQL (bench/durable.ts).
   */
  readonly durable: boolean;
  /** Scale and memory figures (bench/scale.ts): only with `--scale` or `--only scale`. */
  readonly scale: boolean;
  readonly workloads: readonly WorkloadName[];
  readonly quick: boolean;
  /**
   * `--cpu-prof` / `--alloc-prof`: profile every child of the socket systems and the objects pair
   * during the first measured run of each workload (bench/results/profiles/); absent: no profile.
   */
  readonly profile?: ProfileKind;
  /**
   * `--session-idle LIST`: how many idle sessions the sessions bench opens on a fresh gateway per kind
   * for its memory per session, one measurement per count (default 10,000; `--quick`: 1,000).
   */
  readonly sessionIdle: readonly number[];
  /** Requests outstanding in the pipelined workload. */
  readonly depth: number;
  /** One-way sends started per event-loop turn. */
  readonly burst: number;
  /**
   * `--idle-ms N`: the sequential workload's client sleeps N ms before each request, so each one finds
   * both processes idle (a sparse load; the relocation bench samples its hop that way). 0: back to back.
   */
  readonly idleMs: number;
  /**
   * A git revision whose `lib` + `bench` also run, as extra systems next to the ZLink ones
   * (bench/baseline.ts); absent without `--baseline`.
   */
  readonly baseline?: string;
}

/** The systems `--baseline` runs a second time from the baseline build: the ones built on lib/. */
export const BASELINE_SYSTEMS: readonly SystemName[] = ['zlink', 'mesh', 'mesh-node'];

export const USAGE = `npm run bench -- [--duration S] [--reps N] [--only ${PARTS.join(',')}]
                       [--workloads ${WORKLOADS.join(',')}] [--quick] [--cpu-prof | --alloc-prof]
                       [--baseline REV] [--scale] [--idle-ms N] [--session-idle LIST]
  --duration S   measured seconds per workload and system, split over the repetitions (default 3)
  --reps N       repetitions per workload; numbers are their medians (default 3; --quick: 1)
  --only LIST    systems to run (default: all, the selector, fanout, objects, relocation, sessions, multicast
                 and durable: Spots with every-turn persistence on Redis and PostgreSQL against none,
                 writes, bytes per saved object, 10,000 objects restored; about 50 s on its own)
  --scale        only the scale and memory figures (memory per object and route-cache entry, creates
                 and relocations per second against one Redis, a 16-node mesh): about two minutes
  --workloads L  workloads to run (default: all)
  --quick        a smoke run: --duration 1, 1 repetition, short warm-up, fewer selector picks, 1,000
                 objects restored per store in durable
  --cpu-prof     profile client and server during the first measured run of each workload;
                 profiles in bench/results/profiles/, top 10 self time printed at the end
  --alloc-prof   the same with V8's sampling heap profiler (collected objects kept): where the
                 bytes allocated per call come from, top 10 allocation sites printed at the end
  --baseline REV also build REV's lib and bench (a git revision: HEAD~3, main, a commit) and run
                 its ${BASELINE_SYSTEMS.join(', ')} (those --only selects) interleaved with the
                 current ones; the table adds a column current ÷ baseline for each
  --session-idle L  idle sessions per kind for the sessions bench's memory per session, a fresh
                 gateway for each count (default 10000; --quick: 1000); e.g. 10000,50000. A count the
                 open-file limit (ulimit -n) cannot hold is reported as not run`;

function list<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T[] {
  const items = (value ?? '').split(',').filter((s) => s.length > 0);
  for (const item of items) {
    if (!allowed.includes(item as T))
      throw new Error(`${flag}: unknown '${item}' (one of ${allowed.join(', ')})`);
  }
  if (items.length === 0) throw new Error(`${flag} needs a comma-separated list`);
  return items as T[];
}

function positive(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag} needs a positive number, got ${String(value)}`);
  return n;
}

/** A revision for git; one that begins with '-' would be read by git as an option. */
function revision(flag: string, value: string | undefined): string {
  if (value === undefined || value.length === 0 || value.startsWith('-'))
    throw new Error(`${flag} needs a git revision (e.g. HEAD~3, main or a commit), got ${String(value)}`);
  return value;
}

/** Parses the command line; throws with a message naming the flag. */
export function parseOptions(argv: readonly string[]): BenchOptions {
  let duration: number | undefined;
  let reps: number | undefined;
  let only: string[] = [...DEFAULT_PARTS];
  let workloads: WorkloadName[] = [...WORKLOADS];
  let quick = false;
  let profile: ProfileKind | undefined;
  let baseline: string | undefined;
  let idleMs = 0;
  let sessionIdle: number[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const [name, inline] = flag.includes('=') ? flag.split('=', 2) : [flag, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (name) {
      case '--duration':
        duration = positive(name, value());
        break;
      case '--reps':
        reps = Math.round(positive(name, value()));
        break;
      case '--only':
        only = list(name, value(), PARTS);
        break;
      case '--workloads':
        workloads = list(name, value(), WORKLOADS);
        break;
      case '--quick':
        quick = true;
        break;
      case '--scale':
        only = ['scale'];
        break;
      case '--cpu-prof':
      case '--alloc-prof': {
        const kind = name === '--cpu-prof' ? 'cpu' : 'alloc';
        if (profile !== undefined && profile !== kind)
          throw new Error('--cpu-prof and --alloc-prof: one at a time (each would distort the other)');
        profile = kind;
        break;
      }
      case '--baseline':
        baseline = revision(name, value());
        break;
      case '--idle-ms':
        idleMs = positive(name, value());
        break;
      case '--session-idle':
        sessionIdle = (value() ?? '').split(',').map((v) => Math.round(positive(name, v)));
        break;
      case '--help':
      case '-h':
        throw new Error(USAGE);
      default:
        throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
  }
  const systems = SYSTEM_NAMES.filter((s) => only.includes(s));
  if (baseline !== undefined && !systems.some((s) => BASELINE_SYSTEMS.includes(s)))
    throw new Error(`--baseline: --only selects none of ${BASELINE_SYSTEMS.join(', ')}, nothing to compare`);
  return {
    durationMs: (duration ?? (quick ? 1 : 3)) * 1000,
    reps: reps ?? (quick ? 1 : 3),
    warmupMs: quick ? 200 : 500,
    systems,
    selector: only.includes('selector'),
    fanout: only.includes('fanout'),
    objects: only.includes('objects'),
    relocation: only.includes('relocation'),
    sessions: only.includes('sessions'),
    multicast: only.includes('multicast'),
    durable: only.includes('durable'),
    scale: only.includes('scale'),
    workloads: WORKLOADS.filter((w) => workloads.includes(w)),
    quick,
    ...(profile === undefined ? {} : { profile }),
    sessionIdle: sessionIdle ?? [quick ? 1000 : 10_000],
    depth: 256,
    burst: 256,
    idleMs,
    // Only when given, so that latest.json without --baseline stays as it was.
    ...(baseline === undefined ? {} : { baseline }),
  };
}
