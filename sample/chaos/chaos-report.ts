/**
 * The chaos harness's verdict: reads what the clients recorded and what the servers logged, and
 * counts the invariants (see chaos.ts for the run itself).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CS_CHANNEL, MESH_CHANNEL, REPLY, REQUEST_TIMEOUT_MS, TALLY_RESTORE_MS } from './chaos-config.js';
import {
  type TallyActivations,
  type TallyRecord,
  type TallyRestore,
  describeTallies,
  tallyVerdict,
} from './chaos-tallies.js';

/** One client's record file (written by chaos-client.ts). */
export interface ClientRecord {
  name: string;
  started: number;
  arrangements: Record<string, { started: number; terminals: Record<string, number>; hist: number[] }>;
  zeroTerminal: { count: number; sample: string[] };
  multiTerminal: { count: number; sample: string[] };
  misrouted: { count: number; sample: string[] };
  kinds: string[];
  /** Requests started per 100 ms slot (key: epoch ms / 100). */
  startsPer100ms: Record<string, number>;
  /** base64, one byte per request: index into `kinds` (0 = no terminal, 1 = reply). */
  terminals: string;
  /** [seq, arrangement (0 ClientServer, 1 RouteMesh, 2 rooms, 3 tallies), kind, startMs, endMs, target rid or null] */
  failures: [number, number, string, number, number, string | null][];
  /** The harness's relocations of rooms and tallies, by outcome; `pending`: not ended when the client stopped. */
  moves: {
    committed: number;
    committedTallies: number;
    aborted: Record<string, number>;
    refused: Record<string, number>;
    pending: number;
  };
  tallies: TallyRecord;
}

/** A fault the harness injected: a server SIGSTOPped (until `until`) or SIGKILLed. */
export interface Fault {
  kind: 'kill' | 'stop';
  rid: string;
  at: number;
  /** SIGCONT time of a stop; the kill time of a kill. */
  until: number;
}

/**
 * How long after a fault ends a failure on that server is still put down to it: a resumed server
 * first works off the requests that queued while it was stopped, and a kill is noticed by the
 * connection a moment later.
 */
export const FAULT_EXCUSE_MS = 1000;
/** The outage window runs from the Redis kill until this long after Redis answers again. */
export const OUTAGE_TAIL_MS = 5000;

export interface RunFacts {
  dir: string;
  t0: number;
  durationS: number;
  inflightPerClient: number;
  faults: Fault[];
  skippedTicks: number;
  restarts: number;
  redisDownAt: number | undefined;
  redisUpAt: number | undefined;
  unexpectedExits: string[];
  seed: number;
}

const percentile = (hist: number[], total: number, p: number): number => {
  if (total === 0) return 0;
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (let ms = 0; ms < hist.length; ms++) {
    seen += hist[ms] ?? 0;
    if (seen >= rank) return ms;
  }
  return hist.length - 1;
};

/** Counts executions per (client, seq) from every server log in `dir` (`srv-*.log`). */
function countExecutions(
  dir: string,
  clients: Map<string, Uint8Array>,
): { lines: number; unknown: number; files: number; perProcess: Record<string, number> } {
  let lines = 0;
  let unknown = 0;
  let files = 0;
  const perProcess: Record<string, number> = {};
  const logs = readdirSync(dir).filter((f) => f.startsWith('srv-') && f.endsWith('.log'));
  for (const file of logs.sort()) {
    files++;
    const before = lines;
    const bytes = readFileSync(join(dir, file));
    let lineStart = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 0x0a) continue;
      const line = bytes.toString('latin1', lineStart, i);
      lineStart = i + 1;
      lines++;
      const dash = line.lastIndexOf('-');
      const exec = clients.get(line.slice(0, dash));
      const seq = Number(line.slice(dash + 1));
      if (!exec || !Number.isInteger(seq) || seq < 0 || seq >= exec.length) {
        unknown++;
        continue;
      }
      if (exec[seq]! < 255) exec[seq]!++;
    }
    // A line without its newline would be a torn write; writeSync of one short line never tears.
    if (lineStart < bytes.length) unknown++;
    // srv-2.1.log: the second process (start 1) of srv-2.
    perProcess[file.replace(/\.log$/, '').replace('.', '#')] = lines - before;
  }
  return { lines, unknown, files, perProcess };
}

export function buildReport(
  facts: RunFacts,
  clientRecords: ClientRecord[],
  tallies: { restore: TallyRestore; activations: TallyActivations },
) {
  const faultsByRid = new Map<string, Fault[]>();
  for (const f of facts.faults) faultsByRid.set(f.rid, [...(faultsByRid.get(f.rid) ?? []), f]);
  const faulted = (rid: string | null, start: number, end: number): boolean =>
    rid !== null &&
    (faultsByRid.get(rid) ?? []).some((f) => f.at <= end && f.until + FAULT_EXCUSE_MS >= start);
  const windowStart = facts.redisDownAt ?? Infinity;
  const windowEnd = facts.redisUpAt === undefined ? Infinity : facts.redisUpAt + OUTAGE_TAIL_MS;
  const inOutage = (start: number) => start >= windowStart && start < windowEnd;

  const executions = new Map(clientRecords.map((c) => [c.name, new Uint8Array(c.started)]));
  const logs = countExecutions(facts.dir, executions);

  let started = 0;
  let startedInWindow = 0;
  let outageStarted = 0;
  const terminals: Record<string, number> = {};
  const byArrangement: Record<string, { started: number; terminals: Record<string, number> }> = {};
  const hist = new Array<number>(REQUEST_TIMEOUT_MS * 2 + 2).fill(0);
  let zeroTerminal = 0;
  let multiTerminal = 0;
  let misrouted = 0;
  let duplicates = 0;
  let repliesWithoutExecution = 0;
  let failedButExecuted = 0;
  const outageFailures: Record<string, number> = {};
  const outageFailureSample: string[] = [];
  let outageFailuresExcused = 0;
  const unexplainedOutside: Record<string, number> = {};
  const unexplainedSample: string[] = [];
  const samples = { zeroTerminal: [] as string[], multiTerminal: [] as string[], duplicates: [] as string[] };
  const moves = {
    committed: 0,
    committedTallies: 0,
    aborted: {} as Record<string, number>,
    refused: {} as Record<string, number>,
    pending: 0,
  };

  for (const c of clientRecords) {
    started += c.started;
    for (const [slot, n] of Object.entries(c.startsPer100ms))
      if (inOutage(Number(slot) * 100)) startedInWindow += n;
    zeroTerminal += c.zeroTerminal.count;
    multiTerminal += c.multiTerminal.count;
    misrouted += c.misrouted.count;
    samples.zeroTerminal.push(...c.zeroTerminal.sample);
    samples.multiTerminal.push(...c.multiTerminal.sample);
    for (const [name, a] of Object.entries(c.arrangements)) {
      const mine = (byArrangement[name] ??= { started: 0, terminals: {} });
      mine.started += a.started;
      for (const [kind, n] of Object.entries(a.terminals)) {
        mine.terminals[kind] = (mine.terminals[kind] ?? 0) + n;
        terminals[kind] = (terminals[kind] ?? 0) + n;
      }
      a.hist.forEach((n, ms) => (hist[ms] = (hist[ms] ?? 0) + n));
    }
    const exec = executions.get(c.name)!;
    const kinds = Buffer.from(c.terminals, 'base64');
    for (let seq = 0; seq < c.started; seq++) {
      const e = exec[seq]!;
      if (e > 1) {
        duplicates++;
        if (samples.duplicates.length < 20) samples.duplicates.push(`${c.name}-${seq} ×${e}`);
      }
      if (kinds[seq] === REPLY && e === 0) repliesWithoutExecution++;
      else if (kinds[seq] !== REPLY && kinds[seq] !== 0 && e > 0) failedButExecuted++;
    }
    moves.committed += c.moves.committed;
    moves.committedTallies += c.moves.committedTallies;
    moves.pending += c.moves.pending;
    for (const [k, n] of Object.entries(c.moves.aborted)) moves.aborted[k] = (moves.aborted[k] ?? 0) + n;
    for (const [k, n] of Object.entries(c.moves.refused)) moves.refused[k] = (moves.refused[k] ?? 0) + n;
    for (const [seq, arrangement, kind, start, end, target] of c.failures) {
      // An object's failures are information: an object whose owner died stays unavailable until it
      // is taken over after its lease, which needs the store (the no-loss checks above still apply).
      if (arrangement >= 2) continue;
      if (inOutage(start)) outageStarted++;
      const excused = faulted(target, start, end);
      const describe = () =>
        `${c.name}-${seq} ${arrangement === 0 ? 'client-server' : 'route-mesh'} ${kind} on ${target ?? '(none selected)'} at +${((start - facts.t0) / 1000).toFixed(2)}s after ${Math.round(end - start)} ms`;
      if (inOutage(start)) {
        if (excused) outageFailuresExcused++;
        else {
          outageFailures[kind] = (outageFailures[kind] ?? 0) + 1;
          if (outageFailureSample.length < 20) outageFailureSample.push(describe());
        }
      } else if (!excused) {
        unexplainedOutside[kind] = (unexplainedOutside[kind] ?? 0) + 1;
        if (unexplainedSample.length < 20) unexplainedSample.push(describe());
      }
    }
  }
  const tally = tallyVerdict(clientRecords, tallies.restore, tallies.activations);
  const settled = hist.reduce((a, b) => a + b, 0);
  const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  const invariants = {
    zeroTerminal,
    multiTerminal,
    duplicateExecutions: duplicates,
    outageFailures: sum(outageFailures),
    misroutedReplies: misrouted,
    repliesWithoutExecution,
    relocationsUnended: moves.pending,
    unexpectedExits: facts.unexpectedExits.length,
    ...tally.invariants,
  };
  return {
    type: 'chaos-result',
    ok: Object.values(invariants).every((n) => n === 0),
    invariants,
    seed: facts.seed,
    durationS: facts.durationS,
    processes: { servers: 4, clients: clientRecords.length, inflightPerClient: facts.inflightPerClient },
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    started,
    terminals,
    byArrangement,
    timeToTerminalMs: {
      p50: percentile(hist, settled, 50),
      p90: percentile(hist, settled, 90),
      p99: percentile(hist, settled, 99),
      p999: percentile(hist, settled, 99.9),
      max: percentile(hist, settled, 100),
    },
    executions: { ...logs, failedButExecuted },
    relocations: moves,
    tallies: tally,
    faults: {
      kills: facts.faults.filter((f) => f.kind === 'kill').length,
      stops: facts.faults.filter((f) => f.kind === 'stop').length,
      restarts: facts.restarts,
      skippedTicks: facts.skippedTicks,
      list: facts.faults.map((f) => ({
        kind: f.kind,
        rid: f.rid,
        atS: +((f.at - facts.t0) / 1000).toFixed(2),
        ...(f.kind === 'stop' && { forS: +((f.until - f.at) / 1000).toFixed(2) }),
      })),
      redisOutage:
        facts.redisDownAt === undefined
          ? null
          : {
              downAtS: +((facts.redisDownAt - facts.t0) / 1000).toFixed(2),
              upAtS: facts.redisUpAt === undefined ? null : +((facts.redisUpAt - facts.t0) / 1000).toFixed(2),
              windowEndS: windowEnd === Infinity ? null : +((windowEnd - facts.t0) / 1000).toFixed(2),
            },
    },
    outage: {
      startedInWindow,
      failuresStartedInWindow: outageStarted,
      excusedByServerFault: outageFailuresExcused,
      violationsByKind: outageFailures,
      violationSample: outageFailureSample,
    },
    unexplainedFailuresOutsideOutage: unexplainedOutside,
    unexplainedFailuresOutsideOutageSample: unexplainedSample,
    unexpectedExits: facts.unexpectedExits,
    samples,
  };
}

export type ChaosReport = ReturnType<typeof buildReport>;

const fmt = (r: Record<string, number>) =>
  Object.keys(r).length === 0
    ? 'none'
    : Object.entries(r)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v}`)
        .join(' · ');

/** The human-readable summary. */
export function describeReport(r: ChaosReport): string {
  const o = r.faults.redisOutage;
  const mark = (n: number) => (n === 0 ? '0  ✓' : `${n}  ✗ VIOLATION`);
  const tallyLines = describeTallies(r.tallies, mark, TALLY_RESTORE_MS);
  const lines = [
    '',
    `chaos: ${r.durationS} s, 4 servers + 2 clients, ${r.processes.inflightPerClient} requests in flight per client (ClientServer '${CS_CHANNEL}', RouteMesh '${MESH_CHANNEL}', the room Spots and the tally Actors by id while the harness moves them), request timeout ${r.requestTimeoutMs} ms, seed ${r.seed}`,
    `faults: ${r.faults.kills} SIGKILL (then a restart as a new generation, ${r.faults.restarts} restarts), ${r.faults.stops} SIGSTOP/SIGCONT, ${r.faults.skippedTicks} ticks skipped to keep a server healthy`,
    o
      ? `Redis: SIGKILLed at +${o.downAtS}s, answering again at +${o.upAtS}s (same port, empty); outage window for the check: +${o.downAtS}s … +${o.windowEndS ?? 'end'}s (until ${OUTAGE_TAIL_MS / 1000} s after it answers)`
      : 'Redis: no outage',
    `requests started: ${r.started}`,
    `terminals: ${fmt(r.terminals)}`,
    ...Object.entries(r.byArrangement).map(([k, a]) => `  ${k}: started ${a.started}; ${fmt(a.terminals)}`),
    `time to terminal: p50 ${r.timeToTerminalMs.p50} ms · p90 ${r.timeToTerminalMs.p90} ms · p99 ${r.timeToTerminalMs.p99} ms · p99.9 ${r.timeToTerminalMs.p999} ms · max ${r.timeToTerminalMs.max} ms (request timeout ${r.requestTimeoutMs} ms)`,
    `executions logged: ${r.executions.lines} lines in ${r.executions.files} server logs; ${r.executions.failedButExecuted} failed requests had run (a Timeout or RouteError may have run)`,
    `executions per server process (rid#start): ${Object.entries(r.executions.perProcess)
      .map(([k, v]) => `${k} ${v}`)
      .join(' · ')}`,
    ...tallyLines.figures,
    `relocations: ${r.relocations.committed} of rooms and ${r.relocations.committedTallies} of tallies committed; aborted ${fmt(r.relocations.aborted)}; refused ${fmt(r.relocations.refused)}`,
    `outage: ${r.outage.startedInWindow} requests started in the window (to 0.1 s), ${r.outage.failuresStartedInWindow} of them failed, ${r.outage.excusedByServerFault} of those on a server that was SIGSTOPped/SIGKILLed while they were under way`,
    `failures outside the window not explained by a fault on their server (information): ${fmt(r.unexplainedFailuresOutsideOutage)}`,
    '',
    'invariants (must all be 0):',
    `  requests with no terminal (after a grace of one timeout + 1 s):  ${mark(r.invariants.zeroTerminal)}`,
    `  requests with more than one terminal:                           ${mark(r.invariants.multiTerminal)}`,
    `  requests executed more than once (server logs):                 ${mark(r.invariants.duplicateExecutions)}`,
    `  requests on ready connections failed during the Redis outage:   ${mark(r.invariants.outageFailures)}`,
    `  replies carrying another request's id:                          ${mark(r.invariants.misroutedReplies)}`,
    `  replies with no execution in any server log (log check):        ${mark(r.invariants.repliesWithoutExecution)}`,
    `  relocations that never ended (committed, aborted or refused):   ${mark(r.invariants.relocationsUnended)}`,
    `  processes that exited without being killed:                     ${mark(r.invariants.unexpectedExits)}`,
    ...tallyLines.invariants,
    '',
    'The rooms and tallies (objects) share the no-loss checks (one terminal, one execution, a reply only after an',
    'execution); their failures are information: a room whose owner was killed stays unavailable until it is',
    'taken over after its lease (30 s here), and a move waits for the store through the outage.',
    'A tally (a persistent Actor, every turn saved in a State Store on a Redis that is never killed) whose',
    'owner is gone is taken over by a get-or-create and restored from that store; at the end every tally is',
    'read, and each op a client heard back from must be there, once, in the order that client sent them.',
    'Outage check (channels): a request counts when it started while Redis was down or within 5 s after it answered',
    'again, and failed (any terminal but a reply), unless the server it was sent to (the selection event) was',
    `SIGSTOPped or SIGKILLed at some point of its life (up to ${FAULT_EXCUSE_MS} ms after the SIGCONT/SIGKILL): a`,
    'request sent nowhere (NotFound ...) always counts. Server faults go on during the outage. Leases are',
    'ttl 30 s / refresh 2 s / margin 1 s, so a 10 s outage does not fence anyone (the defaults, ttl 10 s,',
    'would fence 6–9 s in and refuse work with Rejected).',
  ];
  if (r.unexplainedFailuresOutsideOutageSample.length)
    lines.push(
      'failures outside the window not explained by a fault:',
      ...r.unexplainedFailuresOutsideOutageSample.map((s) => `  ${s}`),
    );
  if (r.outage.violationSample.length)
    lines.push('outage failures:', ...r.outage.violationSample.map((s) => `  ${s}`));
  for (const [k, v] of Object.entries(r.samples)) if (v.length) lines.push(`${k}: ${v.join(', ')}`);
  if (r.unexpectedExits.length) lines.push(`unexpected exits: ${r.unexpectedExits.join('; ')}`);
  return lines.join('\n');
}
