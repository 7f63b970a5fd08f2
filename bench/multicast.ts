/**
 * Logical Multicast (issue 31 item 7): eight object servers and a publisher process on one mesh
 * (discovery through a private redis-server). Each server hosts one `mc-lobby` Spot (more on the first
 * three for the wide audience); a publish on topic `n<N>` reaches the first N servers. Measured:
 * events delivered to subscribed Spots per second across three nodes, next to classic fanout delivering
 * the same events from one publisher to three subscriber processes; the publisher's own rate as the
 * audience grows (1, 2, 4, 8 nodes: one record per node per publish); and three nodes with 100 Spots
 * each. A round publishes for `repMs` as fast as the publisher can (bursts of 1000); delivered counts
 * are the Spots' handlers' own, read once they stop changing, and their rate runs until the last event
 * ran. Medians of `reps` rounds, after a warm-up.
 */
import { join } from 'node:path';
import { startPrivateRedis } from '../sample/private-redis.js';
import { BenchChild } from './children.js';
import { median } from './workload/stats.js';

const STANDARD_REDIS = 'redis://127.0.0.1:6379';
const TIMEOUT_MS = 120_000;
const SETTLE_MS = 500;
/** A round publishes for a time, or a number of publishes (no more than a Spot's queue takes: 1024). */
type Length = { ms: number } | { count: number };
const WIDE_BURST = 1000;
/** How long a round waits at most for the servers to run what they were handed. */
const DRAIN_MS = 60_000;
const SERVERS = 8;

export interface MulticastRow {
  readonly case: string;
  /** Nodes whose Spots subscribe to the topic, and Spots in all. */
  readonly nodes: number;
  readonly spots: number;
  readonly publishPerSec: number;
  /** Microseconds of the publisher per publish (1 / rate). */
  readonly usPerPublish: number;
  readonly deliveredPerSec: number;
  readonly deliveredPerSecReps: number[];
  /** Events the servers did not run over all rounds (refused by a full Spot queue, or dropped). */
  readonly lost: number;
}

export interface MulticastSection {
  readonly store: string;
  readonly reps: number;
  readonly repMs: number;
  readonly rows: MulticastRow[];
  /** Classic fanout, one publisher to three subscriber processes, the same payload. */
  readonly fanout: {
    readonly publishPerSec: number;
    readonly deliveredPerSec: number;
    readonly dropped: number;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runMulticast(
  dir: string,
  repMs: number,
  reps: number,
): Promise<MulticastSection | { error: string }> {
  const privateRedis = await startPrivateRedis();
  const url = privateRedis?.url ?? STANDARD_REDIS;
  const store = privateRedis ? 'private redis-server' : `redis on ${url}`;
  const env = { BENCH_REDIS_URL: url, BENCH_KEY_PREFIX: `zlink-bench-mc-${process.pid}` };
  const script = join(dir, 'zlink-multicast-peer.js');
  const children: BenchChild[] = [];
  try {
    const servers = Array.from({ length: SERVERS }, (_, i) => {
      const child = new BenchChild(`mc-${i}`, script, {
        args: ['--role', 'server', '--index', String(i)],
        env,
      });
      children.push(child);
      return child;
    });
    const publisher = new BenchChild('mc-publisher', script, { args: ['--role', 'publisher'], env });
    children.push(publisher);
    await Promise.all(children.map((c) => c.next('ready', TIMEOUT_MS)));
    for (const c of children) {
      c.command({ type: 'peers', count: SERVERS });
      await c.next('peers', TIMEOUT_MS);
    }
    const round = async (topic: string, length: Length) => {
      const r = await drainedRound(servers, async () => {
        publisher.command({ type: 'run', topic, ...length });
        return publisher.next('done', TIMEOUT_MS);
      });
      return {
        publishPerSec: (r.done.published as number) / ((r.done.elapsedMs as number) / 1000),
        deliveredPerSec: r.deliveredPerSec,
        lost: r.lost,
      };
    };
    const measure = async (
      label: string,
      nodes: number,
      spots: number,
      length: Length,
    ): Promise<MulticastRow> => {
      const topic = `n${nodes}`;
      await round(topic, 'ms' in length ? { ms: Math.min(500, length.ms) } : length);
      const publish: number[] = [];
      const delivered: number[] = [];
      let lost = 0;
      for (let rep = 0; rep < reps; rep++) {
        const r = await round(topic, length);
        publish.push(r.publishPerSec);
        delivered.push(r.deliveredPerSec);
        lost += r.lost;
      }
      const publishPerSec = median(publish);
      return {
        case: label,
        nodes,
        spots,
        publishPerSec,
        usPerPublish: 1e6 / publishPerSec,
        deliveredPerSec: median(delivered),
        deliveredPerSecReps: delivered,
        lost,
      };
    };
    publisher.command({ type: 'create', servers: SERVERS, perServer: 1 });
    await publisher.next('created', TIMEOUT_MS);
    const rows: MulticastRow[] = [];
    for (const nodes of [1, 2, 3, 4, 8])
      rows.push(await measure(`${nodes} node(s), 1 Spot each`, nodes, nodes, { ms: repMs }));
    // 99 more on each of the first three: a wide audience on a few nodes. Each publish is 100 turns
    // on each of them, so a round is one burst the nodes drain behind the publisher: published for a
    // while, it would bury them under turns until their mesh links missed heartbeats and the
    // publisher, seeing no subscriber left, sent to nobody.
    publisher.command({ type: 'create', servers: 3, from: 1, perServer: 100 });
    await publisher.next('created', TIMEOUT_MS);
    const wide = `3 nodes, 100 Spots each, ${WIDE_BURST} publishes a round`;
    rows.push(await measure(wide, 3, 300, { count: WIDE_BURST }));
    for (const c of children) await c.stop(5000);
    children.length = 0;
    return { store, reps, repMs, rows, fanout: await fanoutToThree(dir, repMs, reps) };
  } catch (error) {
    return { error: String((error as Error)?.message ?? error) };
  } finally {
    await Promise.all(children.map((c) => c.stop(5000)));
    await privateRedis?.stop();
  }
}

/** What the receivers counted (their `count` answers): events run, the last one's time, and lost ones. */
async function countsOf(
  receivers: readonly BenchChild[],
): Promise<{ count: number; lastAt: number; lost: number }> {
  const all = await Promise.all(
    receivers.map(async (r) => {
      r.command({ type: 'count' });
      return r.next('count', TIMEOUT_MS);
    }),
  );
  const sum = (key: string) => all.reduce((n, c) => n + ((c[key] as number | undefined) ?? 0), 0);
  return {
    count: sum('count'),
    lastAt: Math.max(...all.map((c) => c.lastAt as number)),
    lost: sum('lost') + sum('dropped'),
  };
}

/**
 * One round of `publish` (which resolves with the publisher's `done`): the receivers may still be
 * running what they were handed when it ends, so the round waits until their counts stop changing
 * (bounded by DRAIN_MS), and the delivery rate runs from the start until the last event ran,
 * wherever it ran.
 */
async function drainedRound(
  receivers: readonly BenchChild[],
  publish: () => Promise<Record<string, unknown>>,
): Promise<{ done: Record<string, unknown>; deliveredPerSec: number; lost: number }> {
  await sleep(SETTLE_MS);
  const before = await countsOf(receivers);
  const startedAt = Date.now();
  const done = await publish();
  let after = await countsOf(receivers);
  for (const drainEnd = Date.now() + DRAIN_MS; Date.now() < drainEnd;) {
    await sleep(SETTLE_MS);
    const now = await countsOf(receivers);
    if (now.count === after.count && now.lost === after.lost) break;
    after = now;
  }
  const delivered = after.count - before.count;
  const seconds = (after.lastAt - startedAt) / 1000;
  return { done, deliveredPerSec: delivered === 0 ? 0 : delivered / seconds, lost: after.lost - before.lost };
}

/** ZLink classic fanout: one publisher process, three subscriber processes, as fast as it goes. */
async function fanoutToThree(dir: string, repMs: number, reps: number): Promise<MulticastSection['fanout']> {
  const script = join(dir, 'fanout-peer.js');
  const pub = new BenchChild('fanout-pub', script, { args: ['--role', 'pub', '--system', 'zlink'] });
  const subs: BenchChild[] = [];
  try {
    const { endpoint } = await pub.next('ready', TIMEOUT_MS);
    for (let i = 0; i < 3; i++) {
      const sub = new BenchChild(`fanout-sub-${i}`, script, {
        args: ['--role', 'sub', '--system', 'zlink', '--endpoint', String(endpoint)],
      });
      subs.push(sub);
      await sub.next('ready', TIMEOUT_MS);
    }
    pub.command({ type: 'run', ms: Math.min(500, repMs) });
    await pub.next('done', TIMEOUT_MS);
    const publish: number[] = [];
    const delivered: number[] = [];
    let dropped = 0;
    for (let rep = 0; rep < reps; rep++) {
      const r = await drainedRound(subs, async () => {
        pub.command({ type: 'run', ms: repMs });
        return pub.next('done', TIMEOUT_MS);
      });
      publish.push((r.done.published as number) / (repMs / 1000));
      delivered.push(r.deliveredPerSec);
      dropped += r.lost;
    }
    return { publishPerSec: median(publish), deliveredPerSec: median(delivered), dropped };
  } finally {
    await Promise.all([pub.stop(5000), ...subs.map((s) => s.stop(5000))]);
  }
}

export function multicastMarkdown(r: MulticastSection | { error: string }): string[] {
  if ('error' in r) return [`**Logical Multicast failed**: ${r.error.split('\n')[0]}`, ''];
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  return [
    '### Logical Multicast',
    '',
    `Eight object servers and a publisher process (${r.store}); a publish on the topic reaches the Spots of ` +
      `the first N servers, one record per node. Medians of ${r.reps} rounds of ${r.repMs} ms.`,
    '',
    '| audience | publishes/s | µs per publish | events delivered/s (to Spots) | not run (refused, dropped) |',
    '| --- | --- | --- | --- | --- |',
    ...r.rows.map(
      (row) =>
        `| ${row.case} | ${n(row.publishPerSec)} | ${row.usPerPublish.toFixed(1)} | ${n(row.deliveredPerSec)} | ${n(row.lost)} |`,
    ),
    `| classic fanout, 3 subscriber processes | ${n(r.fanout.publishPerSec)} | ${(1e6 / r.fanout.publishPerSec).toFixed(1)} | ${n(r.fanout.deliveredPerSec)} | ${n(r.fanout.dropped)} dropped |`,
    '',
  ];
}
