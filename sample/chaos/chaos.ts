/**
 * `npm run chaos [-- --duration S] [--outage S] [--seed N] [--inflight N] [--keep]`: a bounded chaos
 * run on loopback (issue 9). 4 server processes (ClientServer `ledger` + RouteMesh `work` Server
 * members + object servers hosting the relocatable Spot `room` and the persistent Actor `tally`) and 2
 * client processes (each keeping --inflight requests in flight, default 256: 128 per channel
 * arrangement, plus 32 to 12 rooms and one to each of 8 tallies by global id; every 250 ms the harness
 * has a client move a random room or tally to another server), all with `discovery: 'auto'` through a
 * private redis-server; the tallies' State Store is a second private redis-server, never killed.
 * Every 2 s a random healthy server is SIGKILLed (started again 1 s later: a new lifecycle generation, a
 * new port) or SIGSTOPped for 1–4 s then SIGCONTed; at least one server stays healthy. The Location
 * Store's Redis is SIGKILLed once, mid-run, for --outage seconds (default 10) and started again on the
 * same port (empty). After the faults a client brings every tally back and reads it
 * (chaos-tallies.ts). At the end the harness checks the invariants (chaos-report.ts), prints them and
 * one JSON line (`{"type":"chaos-result",...}`), and exits 0 only if all are 0.
 *
 * Every process it starts dies with it: servers and redis-server run under a small shell guard that
 * SIGCONTs and SIGKILLs them when the harness's pipe closes (a SIGSTOPped process cannot notice
 * anything itself); clients, never stopped, end when their command pipe closes. The harness has a
 * hard bound: the duration plus the bounds of its other phases (`HARD_BOUND_EXTRA_S`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../loopback.js';
import { parseArgs, seededRandom } from './chaos-args.js';
import { REQUEST_TIMEOUT_MS, ROOMS, TALLIES, TALLY_RESTORE_MS } from './chaos-config.js';
import { Proc, deferred, killEverything, sleep, startRedisServer, within } from './chaos-process.js';
import { type ClientRecord, type Fault, buildReport, describeReport } from './chaos-report.js';
import type { TallyActivations, TallyRestore } from './chaos-tallies.js';

const here = dirname(fileURLToPath(import.meta.url));
const FAULT_EVERY_MS = 2000;
/** How often the harness asks a client to move one of the rooms or tallies. */
const RELOCATE_EVERY_MS = 250;
const RESTART_AFTER_MS = 1000;
/** A server counts as healthy this long after it became ready or was resumed (clients found it again). */
const SETTLE_MS = 3000;
const SERVER_COUNT = 4;
const CLIENT_COUNT = 2;
/** What the harness may move: the rooms (Spots) and the tallies (Actors). */
const MOVABLE = [
  ...ROOMS.map((id) => ({ kind: 'spot', id })),
  ...TALLIES.map((id) => ({ kind: 'actor', id })),
] as const;
/** Bounds of the phases besides the run itself, in ms (see main). */
const BOUNDS = {
  redisStarts: 3 * 10000,
  serversReady: 60000,
  clientsReady: 60000,
  clientsReport: REQUEST_TIMEOUT_MS + 30000,
  tallies: TALLY_RESTORE_MS + 10000,
  exit: 10000,
};
/** The hard bound past the duration: every phase's bound, and 10 s for the rest (report, logs). */
const HARD_BOUND_EXTRA_S = Object.values(BOUNDS).reduce((a, b) => a + b, 0) / 1000 + 10;

const { durationS, outageS, seed, inflight, keep } = parseArgs(process.argv.slice(2));
const random = seededRandom(seed);

process.on('exit', killEverything);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    console.error(`chaos: ${signal}, stopping everything`);
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'zlink-chaos-'));
let t0 = Date.now();
const rel = (at = Date.now()) => `+${((at - t0) / 1000).toFixed(1)}s`.padStart(7);
const unexpectedExits: string[] = [];
const faults: Fault[] = [];
let skippedTicks = 0;
const tallyActivations: TallyActivations = { created: 0, restored: 0 };
let restarts = 0;
let ending = false;

// Redis -------------------------------------------------------------------------------------------
const redisPort = await freePort();
const redisUrl = `redis://127.0.0.1:${redisPort}`;
let redis: Proc | undefined;
let redisDownAt: number | undefined;
let redisUpAt: number | undefined;
/**
 * The State Store's Redis: never killed. A State Store must be durable — one that came back empty, as
 * the Location Store's does here on purpose, could not keep the state it acknowledged. Being never
 * killed, it needs no persistence of its own in this run.
 */
const statePort = await freePort();
const stateUrl = `redis://127.0.0.1:${statePort}`;
let stateRedis: Proc | undefined;

const startRedis = (port: number, what: string): Promise<Proc> =>
  startRedisServer(port, what, () =>
    unexpectedExits.push(`redis-server (${what}) exited by itself ${rel()}`),
  );

// Servers -----------------------------------------------------------------------------------------
interface Slot {
  rid: string;
  proc: Proc | undefined;
  state: 'starting' | 'up' | 'stopped' | 'killed';
  readyAt: number;
  contAt: number;
  starts: number;
  timer: NodeJS.Timeout | undefined;
  ready: Promise<void>;
}

const slots: Slot[] = Array.from({ length: SERVER_COUNT }, (_, i) => ({
  rid: `srv-${i + 1}`,
  proc: undefined,
  state: 'killed',
  readyAt: 0,
  contAt: 0,
  starts: 0,
  timer: undefined,
  ready: Promise.resolve(),
}));

function startServer(slot: Slot): void {
  slot.state = 'starting';
  const n = slot.starts++;
  const log = join(dir, `${slot.rid}.${n}.log`);
  const ready = deferred<void>();
  slot.ready = ready.promise;
  const proc: Proc = new Proc(
    slot.rid,
    true,
    process.execPath,
    [join(here, 'chaos-server.js'), slot.rid, redisUrl, stateUrl, log],
    (message) => {
      if (message.type === 'tally') {
        tallyActivations[message.restored === undefined ? 'created' : 'restored']++;
        return;
      }
      if (message.type === 'ready' && slot.proc === proc) {
        slot.state = 'up';
        slot.readyAt = Date.now();
        if (n > 0)
          console.log(`${rel()}  ${slot.rid} is back: pid ${message.pid}, generation ${message.generation}`);
        ready.resolve();
      } else if (message.type === 'fatal') {
        console.log(`${rel()}  ${slot.rid} (start ${n}) failed: ${String(message.message)}`);
        ready.reject(new Error(`${slot.rid}: ${String(message.message)}`));
      }
    },
    (status) => {
      if (!proc.expected) {
        unexpectedExits.push(`${slot.rid} (start ${n}) exited with status ${status} ${rel()}`);
        console.log(`${rel()}  ${slot.rid} EXITED BY ITSELF (status ${status})`);
        ready.reject(new Error(`${slot.rid} exited with status ${status}`));
        if (slot.proc === proc && !ending) {
          slot.state = 'killed';
          slot.timer = setTimeout(() => restart(slot), RESTART_AFTER_MS);
        }
      }
    },
  );
  slot.proc = proc;
}

function restart(slot: Slot): void {
  if (ending) return;
  restarts++;
  startServer(slot);
}

/**
 * Up and settled: SETTLE_MS since it became ready or was resumed (a resumed one reconnects by itself,
 * Redis or not). A new process must also have been found by the clients: one that came up while Redis
 * was down (or just before) is found only after Redis is back.
 */
function healthy(slot: Slot, now: number): boolean {
  if (slot.state !== 'up') return false;
  if (now < Math.max(slot.readyAt, slot.contAt) + SETTLE_MS) return false;
  if (redisDownAt !== undefined && slot.readyAt + SETTLE_MS > redisDownAt) {
    if (redisUpAt === undefined || now < redisUpAt + SETTLE_MS) return false;
  }
  return true;
}

function faultTick(): void {
  if (ending) return;
  const now = Date.now();
  const candidates = slots.filter((s) => healthy(s, now));
  // At least one healthy server must remain after this fault.
  if (candidates.length < 2) {
    skippedTicks++;
    return;
  }
  const slot = candidates[Math.floor(random() * candidates.length)]!;
  const proc = slot.proc!;
  if (random() < 0.5) {
    proc.kill();
    slot.state = 'killed';
    faults.push({ kind: 'kill', rid: slot.rid, at: now, until: now });
    console.log(
      `${rel(now)}  SIGKILL ${slot.rid} (pid ${proc.pid}); a new process in ${RESTART_AFTER_MS} ms`,
    );
    slot.timer = setTimeout(() => restart(slot), RESTART_AFTER_MS);
  } else {
    const forMs = Math.round(1000 + random() * 3000);
    proc.signal('SIGSTOP');
    slot.state = 'stopped';
    const fault: Fault = { kind: 'stop', rid: slot.rid, at: now, until: now + forMs };
    faults.push(fault);
    console.log(`${rel(now)}  SIGSTOP ${slot.rid} (pid ${proc.pid}) for ${(forMs / 1000).toFixed(1)} s`);
    slot.timer = setTimeout(() => resume(slot, fault), forMs);
  }
}

function resume(slot: Slot, fault: Fault): void {
  if (slot.state !== 'stopped') return;
  slot.proc?.signal('SIGCONT');
  slot.state = 'up';
  slot.contAt = Date.now();
  fault.until = slot.contAt;
  if (!ending) console.log(`${rel()}  SIGCONT ${slot.rid}`);
}

// Clients -----------------------------------------------------------------------------------------
interface ClientState {
  proc: Proc;
  ready: Promise<void>;
  done: Promise<string>;
  /** The file of what the tallies held at the end (once asked with `{type:'tallies'}`). */
  tallies: Promise<string>;
  tick: { started: number; inFlight: number; counts: Record<string, number> };
}

function startClient(name: string): ClientState {
  const ready = deferred<void>();
  const done = deferred<string>();
  const tallies = deferred<string>();
  const fail = (error: Error) => {
    ready.reject(error);
    done.reject(error);
    tallies.reject(error);
  };
  const state: ClientState = {
    proc: undefined as unknown as Proc,
    ready: ready.promise,
    done: done.promise,
    tallies: tallies.promise,
    tick: { started: 0, inFlight: 0, counts: {} },
  };
  state.proc = new Proc(
    name,
    false,
    process.execPath,
    [join(here, 'chaos-client.js'), name, redisUrl, dir, String(inflight)],
    (message) => {
      if (message.type === 'ready') ready.resolve();
      else if (message.type === 'tick') state.tick = message as ClientState['tick'];
      else if (message.type === 'done') done.resolve(message.file as string);
      else if (message.type === 'tallies') tallies.resolve(message.file as string);
      else if (message.type === 'fatal') fail(new Error(`${name}: ${String(message.message)}`));
    },
    (status) => {
      if (!state.proc.expected) {
        unexpectedExits.push(`${name} exited with status ${status} ${rel()}`);
        fail(new Error(`${name} exited with status ${status}`));
      }
    },
  );
  return state;
}

// -------------------------------------------------------------------------------------------------
async function main(): Promise<number> {
  const hardBound = setTimeout(
    () => {
      console.error(`chaos: hard bound of ${durationS + HARD_BOUND_EXTRA_S} s reached; stopping everything`);
      process.exit(2);
    },
    (durationS + HARD_BOUND_EXTRA_S) * 1000,
  );
  hardBound.unref();

  redis = await startRedis(redisPort, 'Location Store');
  stateRedis = await startRedis(statePort, 'State Store');
  console.log(`Location Store: a private redis-server at ${redisUrl} (keyPrefix 'chaos'); logs in ${dir}`);
  console.log(`State Store of the tallies: another private redis-server at ${stateUrl}, never killed`);
  for (const slot of slots) startServer(slot);
  await within(Promise.all(slots.map((s) => s.ready)), BOUNDS.serversReady, 'the 4 servers becoming ready');
  const clients = Array.from({ length: CLIENT_COUNT }, (_, i) => startClient(`c${i + 1}`));
  await within(
    Promise.all(clients.map((c) => c.ready)),
    BOUNDS.clientsReady,
    'the clients finding all 4 servers',
  );
  console.log(
    `4 servers (ClientServer 'ledger' + RouteMesh 'work', discovery: 'auto'), 2 clients × ${inflight} in flight; ${durationS} s, seed ${seed}`,
  );

  t0 = Date.now();
  for (const c of clients) c.proc.send({ type: 'run' });
  const outageAt = ((durationS - outageS) / 2) * 1000;
  const timers: NodeJS.Timeout[] = [];
  for (let at = FAULT_EVERY_MS; at < durationS * 1000 - 500; at += FAULT_EVERY_MS) {
    timers.push(setTimeout(faultTick, t0 + at - Date.now()));
  }
  // Relocations all along, faults and the outage included (the room or tally and the client at random).
  const relocations = setInterval(() => {
    const object = MOVABLE[Math.floor(Math.random() * MOVABLE.length)]!;
    clients[Math.floor(Math.random() * clients.length)]?.proc.send({ type: 'relocate', ...object });
  }, RELOCATE_EVERY_MS);
  const outage = (async () => {
    await sleep(t0 + outageAt - Date.now());
    redis!.kill();
    redisDownAt = Date.now();
    console.log(`${rel(redisDownAt)}  SIGKILL redis-server: the Location Store is gone for ${outageS} s`);
    await redis!.gone;
    await sleep(redisDownAt + outageS * 1000 - Date.now());
    redis = await startRedis(redisPort, 'Location Store');
    redisUpAt = Date.now();
    console.log(`${rel(redisUpAt)}  redis-server is back on the same port (empty)`);
  })();
  const progress = setInterval(() => {
    const started = clients.reduce((n, c) => n + c.tick.started, 0);
    const inFlight = clients.reduce((n, c) => n + c.tick.inFlight, 0);
    const counts: Record<string, number> = {};
    for (const c of clients)
      for (const [k, v] of Object.entries(c.tick.counts)) counts[k] = (counts[k] ?? 0) + v;
    const servers = slots.map((s) => `${s.rid} ${s.state}`).join(', ');
    const store = redisDownAt !== undefined && redisUpAt === undefined ? 'DOWN' : 'up';
    console.log(
      `${rel()}  started ${started}, in flight ${inFlight}, ${Object.entries(counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')} | ${servers} | redis ${store}`,
    );
  }, 5000);

  await sleep(t0 + durationS * 1000 - Date.now());
  await outage;
  ending = true;
  clearInterval(progress);
  clearInterval(relocations);
  for (const t of timers) clearTimeout(t);
  for (const slot of slots) {
    clearTimeout(slot.timer);
    const open = faults.find((f) => f.rid === slot.rid && f.kind === 'stop' && f.until > Date.now());
    if (slot.state === 'stopped' && open) resume(slot, open);
  }
  console.log(`${rel()}  traffic stops; in-flight requests get one timeout (+1 s) to end`);
  for (const c of clients) c.proc.send({ type: 'stop' });
  const files = await within(
    Promise.all(clients.map((c) => c.done)),
    BOUNDS.clientsReport,
    'the clients reporting',
  );
  // Every tally back and read, the servers still up (none is started again: a tally whose owner was
  // killed too late for that comes back once the dead owner's lease lapsed).
  console.log(
    `${rel()}  bringing every tally back (get-or-create until it answers; at most ${TALLY_RESTORE_MS / 1000} s)`,
  );
  clients[0]!.proc.send({ type: 'tallies' });
  const talliesFile = await within(clients[0]!.tallies, BOUNDS.tallies, 'the tallies coming back');
  const tallies = JSON.parse(readFileSync(talliesFile, 'utf8')) as TallyRestore;
  console.log(
    `${rel()}  ${Object.keys(tallies.held).length} of ${TALLIES.length} tallies read after ${(tallies.ms / 1000).toFixed(1)} s`,
  );
  // Every server log is complete once its process is gone (one synchronous write per execution).
  for (const slot of slots) slot.proc?.kill();
  for (const c of clients) c.proc.kill();
  const stopping = [...slots.map((s) => s.proc), ...clients.map((c) => c.proc)];
  await within(Promise.all(stopping.map((p) => p?.gone)), BOUNDS.exit, 'the servers and clients exiting');

  const records = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as ClientRecord);
  const report = buildReport(
    {
      dir,
      t0,
      durationS,
      inflightPerClient: inflight,
      faults,
      skippedTicks,
      restarts,
      redisDownAt,
      redisUpAt,
      unexpectedExits,
      seed,
    },
    records,
    { restore: tallies, activations: tallyActivations },
  );
  redis?.kill();
  stateRedis?.kill();
  console.log(describeReport(report));
  console.log(JSON.stringify(report));
  if (keep || !report.ok) console.log(`logs and client records kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`chaos: ${String((error as Error)?.stack ?? error)}`);
    console.error(`logs kept in ${dir}`);
    process.exit(2);
  },
);
