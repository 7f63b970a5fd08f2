/**
 * `npm run demo [-- --duration S]`: every arrangement between processes, S seconds of billing traffic
 * (default 10) and a few seconds for each other part, a live summary, then everything it started is
 * stopped. Every part's processes start at once, so they boot while the parts before theirs run.
 *  - A private redis-server as the Location Store (every sample uses discovery: 'auto' — no endpoint in
 *    any configuration). Without the binary on PATH the demo stops at once, naming it and the command
 *    that installs it: half of what it shows (Spots, Actors, sessions) needs the store.
 *  - ClientServer: billing servers with weights 100 and 300 and a client sending requests with metadata;
 *    halfway the heavier server drains, later it comes back as a new process (a new generation).
 *  - RouteMesh: three game nodes — Node direct, select-one 1:1, a weight change to 0 and back
 *    (../game-mesh/mesh-demo.ts).
 *  - Classic fanout: one publisher, a fast and a deliberately slow subscriber
 *    (../system-events/fanout-demo.ts).
 *  - The Nest microservice style: a ZLinkServer with @MessagePattern handlers called through
 *    ClientsModule + ZLinkClientProxy (../microservice/microservice-demo.ts).
 *  - Spots: two object servers hosting @Spot('room') and a gateway that opens rooms and has players
 *    join and chat in them by global id, then players over TCP sessions (../rooms/rooms-demo.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LineChild } from '../demo-child.js';
import { freePort } from '../loopback.js';
import { startMesh } from '../game-mesh/mesh-demo.js';
import { startMicroservice } from '../microservice/microservice-demo.js';
import { type PrivateRedis, requirePrivateRedis } from '../private-redis.js';
import { startRooms } from '../rooms/rooms-demo.js';
import { startFanout } from '../system-events/fanout-demo.js';

const here = dirname(fileURLToPath(import.meta.url));
const children: ChildProcess[] = [];
const env: Record<string, string> = {};

function durationSeconds(argv: string[]): number {
  const i = argv.indexOf('--duration');
  const value = i >= 0 ? Number(argv[i + 1]) : 10;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--duration needs seconds, got ${argv[i + 1]}`);
  return value;
}

function start(script: string, args: string[]): ChildProcess {
  const child = spawn(process.execPath, [join(here, script), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  children.push(child);
  return child;
}

const fmt = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort()
    .map(([k, v]) => `${k} ${v}`)
    .join(' · ');

/**
 * The ClientServer part. `settled` is called once the server that came back has served: what is left
 * is the tail of the traffic, which another part's processes may boot beside without skewing anything
 * this part shows (booting beside the split by weight or the return did, on a 2-core machine).
 */
async function billingDemo(seconds: number, settled: () => void): Promise<void> {
  const portB = await freePort(); // billing-b comes back on the same endpoint (manual clients need it)
  const server = (rid: string, weight: string, port = '0') =>
    new LineChild(rid, start('billing-server.js', [rid, weight, port]));
  const a = server('billing-a', '100');
  let b = server('billing-b', '300', String(portB));
  const [infoA, infoB] = await Promise.all([a.next(), b.next()]);
  console.log(
    `billing: billing-a (weight 100) at ${infoA.endpoint}, billing-b (weight 300) at ${infoB.endpoint}`,
  );
  const client = new LineChild(
    'billing client',
    start('billing-client.js', ['2', infoA.endpoint, infoB.endpoint]),
  );
  await client.next();
  client.child.stdin!.write(`${JSON.stringify({ type: 'run' })}\n`);

  const drainAt = seconds * 0.4;
  const backAt = seconds * 0.6;
  let beforeDrain: Record<string, number> = {};
  let drained = false;
  let back = false;
  let bAtReturn = 0;
  // Past the duration only while the server that came back has not been found and used yet (a
  // busy machine starts processes slowly): at most 10 s more.
  const servedSinceReturn = (tick: Record<string, any>) => (tick.counts['billing-b'] ?? 0) > bAtReturn;
  for (let t = 1; ; t++) {
    const tick = await client.next();
    if (t > Math.round(seconds) && (!back || servedSinceReturn(tick) || t > seconds + 10)) break;
    if (back && servedSinceReturn(tick)) settled();
    const ratio = (tick.counts['billing-b'] ?? 0) / Math.max(1, tick.counts['billing-a'] ?? 0);
    console.log(`  [billing ${t}s] ${fmt(tick.counts)} (b:a ${ratio.toFixed(2)})`);
    if (!drained && t >= drainAt) {
      drained = true;
      beforeDrain = { ...tick.counts };
      b.child.kill('SIGUSR2');
      console.log('  billing-b drains: clients stop choosing it, it finishes what it accepted, then leaves');
    } else if (drained && !back && t >= backAt) {
      back = true;
      // Drained, it may have exited by itself already (nothing left to keep it running).
      if (b.child.exitCode === null && b.child.signalCode === null) {
        b.child.kill('SIGTERM');
        await once(b.child, 'exit');
      }
      b = server('billing-b', '300', String(portB));
      await b.next();
      bAtReturn = tick.counts['billing-b'] ?? 0;
      console.log('  billing-b comes back: a new process, a new lifecycle generation');
    }
  }
  client.child.stdin!.write(`${JSON.stringify({ type: 'stop' })}\n`);
  let done = await client.next();
  while (done.type !== 'done') done = await client.next();
  const ratio = (beforeDrain['billing-b'] ?? 0) / Math.max(1, beforeDrain['billing-a'] ?? 0);
  console.log(
    `billing before the drain: ${JSON.stringify(beforeDrain)} → b:a ${ratio.toFixed(2)} (weights 300:100)`,
  );
  console.log(
    `billing in ${done.seconds} s: ${JSON.stringify(done.counts)} failures ${JSON.stringify(done.failures)}`,
  );
  if (back)
    console.log(`billing-b after it came back: ${(done.counts['billing-b'] ?? 0) - bAtReturn} requests`);
  if (done.failures.Rejected)
    console.log('  (Rejected: requests that raced the drain; a draining server refuses them unrun)');
}

let redis: PrivateRedis | undefined;
try {
  const seconds = durationSeconds(process.argv.slice(2));
  try {
    redis = await requirePrivateRedis();
  } catch (error) {
    // Without the store half of the demo (Spots, Actors, sessions) cannot run: stop before starting
    // anything rather than show the other half and end "ok".
    console.error(
      `demo: nothing was started: Spots, Actors and sessions need the Location Store.\n${(error as Error).message}`,
    );
    process.exit(1);
  }
  env.ZLINK_DEMO_STORE = redis.url;
  console.log(`Location Store: a private redis-server at ${redis.url}; every sample uses discovery: 'auto'`);
  // The rooms processes boot while billing runs, the others during its last seconds (all at once);
  // each part then plays in turn.
  const rooms = startRooms(start);
  let later: { run(): Promise<void> }[] | undefined;
  const bootTheRest = () => (later ??= [startMesh(start), startFanout(start), startMicroservice(start)]);
  await billingDemo(seconds, bootTheRest);
  for (const part of [...bootTheRest(), rooms]) await part.run();
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(
    children.map((c) => (c.exitCode === null && c.signalCode === null ? once(c, 'exit') : undefined)),
  );
  await redis?.stop();
  console.log('demo finished; every process it started has stopped');
}
