import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { PAYLOAD } from './payload.js';
import type {
  OneWayResult,
  PipelinedResult,
  RunCommand,
  SequentialResult,
  WorkloadResult,
} from './protocol.js';
import { quantile } from './stats.js';

/** What a client process offers the workloads, whatever the system underneath. */
export interface BenchTarget {
  /** One request; resolves with the echoed payload. */
  request(payload: unknown): Promise<unknown>;
  /** One one-way send; a promise means "not admitted yet" (the caller waits before sending more). */
  send(payload: unknown): Promise<unknown> | undefined;
  /** The server's running total of one-way messages; travels behind earlier sends on the same connection. */
  count(): Promise<number>;
  close(): Promise<void>;
}

/** What the workloads use of a target. */
export type Workable = Omit<BenchTarget, 'close'>;

const now = (): bigint => process.hrtime.bigint();
const msSince = (t0: bigint): number => Number(now() - t0) / 1e6;

/** 1 request in flight; latency of each with `process.hrtime.bigint()`. */
export async function sequential(
  target: Pick<Workable, 'request'>,
  durationMs: number,
  idleMs = 0,
): Promise<SequentialResult> {
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const t0 = now();
  const end = t0 + BigInt(Math.round(durationMs * 1e6));
  for (;;) {
    if (idleMs > 0) await sleep(idleMs);
    const start = now();
    await target.request(PAYLOAD);
    const done = now();
    if (n === latencies.length) {
      const grown = new Float64Array(n * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[n++] = Number(done - start);
    if (done >= end) break;
  }
  const elapsedMs = msSince(t0);
  const sorted = latencies.subarray(0, n).sort();
  return {
    workload: 'sequential',
    requests: n,
    elapsedMs,
    reqPerSec: n / (elapsedMs / 1000),
    p50Us: quantile(sorted, 0.5) / 1000,
    p99Us: quantile(sorted, 0.99) / 1000,
  };
}

/** `depth` requests kept outstanding: each completion starts the next, until the time is up. */
export async function pipelined(
  target: Workable,
  durationMs: number,
  depth: number,
): Promise<PipelinedResult> {
  let requests = 0;
  const t0 = now();
  const end = t0 + BigInt(Math.round(durationMs * 1e6));
  const lane = async (): Promise<void> => {
    while (now() < end) {
      await target.request(PAYLOAD);
      requests++;
    }
  };
  await Promise.all(Array.from({ length: depth }, lane));
  const elapsedMs = msSince(t0);
  return { workload: 'pipelined', requests, elapsedMs, reqPerSec: requests / (elapsedMs / 1000) };
}

/**
 * One burst of the one-way workload: `burst` sends, then a wait until all were admitted and a turn of
 * the loop (so sockets get written). `admissions` is the caller's scratch array, empty again after.
 */
export async function sendBurst(
  send: () => Promise<unknown> | undefined,
  burst: number,
  admissions: Promise<unknown>[],
): Promise<void> {
  for (let i = 0; i < burst; i++) {
    const admitted = send();
    if (admitted) admissions.push(admitted);
  }
  if (admissions.length > 0) {
    await Promise.all(admissions);
    admissions.length = 0;
  }
  await nextTurn();
}

/**
 * Sends as fast as the system admits: `burst` sends per event-loop turn; the next burst starts once
 * all were admitted and the loop had a turn (so sockets get written). Then asks the server for its
 * count, which travels behind the sends: the rate is what the server received over the time from the
 * first send until that count arrived.
 */
export async function oneWay(target: Workable, durationMs: number, burst: number): Promise<OneWayResult> {
  const before = await target.count();
  let sent = 0;
  const t0 = now();
  const end = t0 + BigInt(Math.round(durationMs * 1e6));
  const admissions: Promise<unknown>[] = [];
  const send = () => target.send(PAYLOAD);
  while (now() < end) {
    await sendBurst(send, burst, admissions);
    sent += burst;
  }
  const sendPhaseMs = msSince(t0);
  const received = (await target.count()) - before;
  const elapsedMs = msSince(t0);
  return {
    workload: 'oneway',
    sent,
    received,
    elapsedMs,
    msgsPerSec: received / (elapsedMs / 1000),
    sendPhaseMs,
  };
}

/** Runs a workload: warm-up first (results dropped), then the measured run. */
export async function runWorkload(target: Workable, command: RunCommand): Promise<WorkloadResult> {
  const once = (ms: number): Promise<WorkloadResult> => {
    switch (command.workload) {
      case 'sequential':
        return sequential(target, ms, command.idleMs);
      case 'pipelined':
        return pipelined(target, ms, command.depth);
      case 'oneway':
        return oneWay(target, ms, command.burst);
    }
  };
  if (command.warmupMs > 0) await once(command.warmupMs);
  return once(command.durationMs);
}
