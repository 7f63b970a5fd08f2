/**
 * A chaos client process: a ClientServer client of `ledger`, a RouteMesh client member of `work`
 * (mesh `chaos`) and an Object Client of its `room` Spots and `tally` Actors, all with `discovery:
 * 'auto'`. On `{type:'run'}` it keeps `inflight` requests in flight (half on each channel arrangement)
 * plus `ROOM_INFLIGHT` to the rooms by global id and one to each tally (`{type:'relocate', kind, id}`
 * moves one of them while they run), each with a unique id `<name>-<seq>` in its payload, and records
 * for every request its start, its terminal(s) (reply or error code; every settle callback is
 * counted) and the server it was sent to (the `selection` event, tied to the call through
 * AsyncLocalStorage). On `{type:'stop'}` it starts nothing new, waits for what is in flight (one
 * request timeout + 1 s at most), writes its record to `<dir>/<name>.json` and says `done`. On
 * `{type:'tallies'}` (after the faults) it brings every tally back and writes what each holds to
 * `<dir>/tallies.json` (chaos-tallies.ts).
 * Usage: node chaos-client.js <name> <redisUrl> <dir> <inflight>
 */
import 'reflect-metadata';
import { AsyncLocalStorage } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZLinkModule, ZLinkObjects, ZLinkRouteClient, ZLinkRuntime, isZLinkError } from '../../lib/index.js';
import {
  CS_CHANNEL,
  CS_PACKET,
  MESH,
  MESH_CHANNEL,
  MESH_PACKET,
  NO_TERMINAL,
  REPLY,
  REQUEST_TIMEOUT_MS,
  ROOMS,
  ROOM_INFLIGHT,
  ROOM_PACKET,
  ROOM_TYPE,
  TALLIES,
  TALLY_ADD,
  TALLY_READ,
  TALLY_RESTORE_MS,
  TALLY_TYPE,
  requestId,
  storeOptions,
} from './chaos-config.js';
import { Records } from './chaos-records.js';
import type { TallyRecord, TallyRestore, TallyState } from './chaos-tallies.js';

const [name = 'c1', redisUrl = '', dir = '', inflightArg = '256'] = process.argv.slice(2);
if (!redisUrl || !dir) throw new Error('usage: chaos-client.js <name> <redisUrl> <dir> <inflight>');
const perArrangement = Math.max(1, Math.floor(Number(inflightArg) / 2));
/** Time-to-terminal histogram: 1 ms buckets up to twice the timeout, then one overflow bucket. */
const HIST_MAX = REQUEST_TIMEOUT_MS * 2;

@Module({
  imports: [
    ZLinkModule.forRoot({
      locationStore: storeOptions(redisUrl),
      clientServer: { [CS_CHANNEL]: { client: { discovery: 'auto' } } },
      meshes: {
        [MESH]: {
          rid: name,
          listen: { port: 0, bindHost: '127.0.0.1' },
          discovery: 'auto',
          objectRole: 'client',
          channels: { [MESH_CHANNEL]: { role: 'client' } },
        },
      },
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    }),
  ],
})
class ChaosClientModule {}

const say = (message: object): void => void process.stdout.write(`${JSON.stringify(message)}\n`);

const records = new Records();
const ARRANGEMENTS = ['client-server', 'route-mesh', 'objects', 'tallies'] as const;
type Arrangement = 0 | 1 | 2 | 3;
/** The object arrangements' indexes: requests to the rooms, and to the tallies, by global id. */
const OBJECTS = 2;
const TALLY = 3;
/** Per tally, the next op number and the ops acknowledged (`ok`), in order. */
const tallyNext = TALLIES.map(() => 0);
const tallies: TallyRecord = { acked: Object.fromEntries(TALLIES.map((t) => [t, []])), takeovers: 0 };
let misrouted = 0;
const misroutedSample: string[] = [];

function kindOf(error: unknown): string {
  if (!isZLinkError(error)) return `other:${String((error as Error)?.name ?? error)}`;
  if (error.code === 'RemoteError' || error.code === 'Rejected') return `${error.code}:${error.remote?.code}`;
  return error.code;
}

const app = await NestFactory.createApplicationContext(ChaosClientModule, { logger: false });
// The harness is gone (its pipe closed): stop at once. Not `app.close()`: with the servers and Redis
// gone too, closing could wait on them.
process.stdin.on('end', () => process.exit(0));
const runtime = app.get(ZLinkRuntime);
const route = app.get(ZLinkRouteClient);
const objects = app.get(ZLinkObjects);

/**
 * An object whose owner died is not brought back by a plain call: once its lease is gone (or the object
 * is missing) a get-or-create takes it over, one at a time per object — a tally restored from the State
 * Store. Its outcome is the next call's business.
 */
const recreating = new Set<string>();
function recreate(kind: 'spot' | 'actor', id: string): void {
  if (recreating.has(id)) return;
  recreating.add(id);
  void (kind === 'spot' ? objects.getOrCreateSpot(ROOM_TYPE, id) : objects.getOrCreateActor(TALLY_TYPE, id))
    .then(() => void (kind === 'actor' && tallies.takeovers++))
    .catch(() => undefined)
    .finally(() => recreating.delete(id));
}

/** The harness's relocations of rooms and tallies, by outcome; `pending` ones had not ended yet. */
const moves = {
  committed: 0,
  committedTallies: 0,
  aborted: {} as Record<string, number>,
  refused: {} as Record<string, number>,
  pending: 0,
};
function relocate(kind: 'spot' | 'actor', id: string): void {
  moves.pending++;
  objects
    .relocate({ kind, id })
    .then(
      (r) => {
        if (r.outcome === 'committed') moves[kind === 'spot' ? 'committed' : 'committedTallies']++;
        else moves.aborted[r.code] = (moves.aborted[r.code] ?? 0) + 1;
      },
      (error: unknown) => {
        const k = kindOf(error);
        moves.refused[k] = (moves.refused[k] ?? 0) + 1;
      },
    )
    .finally(() => moves.pending--);
}
let nextRoom = 0;

// Which server each request went to: `selection` is emitted in the call's own async context (at once
// on the fast path, after the wait on the slow one), so the context names the request.
const current = new AsyncLocalStorage<number>();
runtime.events.subscribe(
  (event) => {
    if (event.type !== 'selection' || event.targetRid === undefined) return;
    const seq = current.getStore();
    if (seq !== undefined) records.setTarget(seq, event.targetRid);
  },
  { perMessage: true },
);

let running = false;
let frozen = false;

/** Starts one request; resolves `true` when it ended with its reply. */
function one(arrangement: Arrangement, lane: number): Promise<boolean> {
  const seq = records.open(arrangement, Date.now());
  const id = requestId(name, seq);
  const room = arrangement === OBJECTS ? (ROOMS[nextRoom++ % ROOMS.length] as string) : '';
  const tally = TALLIES[lane] as string;
  const n = arrangement === TALLY ? tallyNext[lane]!++ : 0;
  let reply: Promise<{ id: string; by: string }>;
  try {
    reply = current.run(seq, () =>
      (arrangement === 0
        ? route.requestToChannel(CS_CHANNEL, CS_PACKET, { id })
        : arrangement === 1
          ? route.requestToChannel(MESH_CHANNEL, MESH_PACKET, { id })
          : arrangement === OBJECTS
            ? route.toSpot(room).request(ROOM_PACKET, { id })
            : route.toActor(tally).request(TALLY_ADD, { id, c: name, n })
      ).async<{ id: string; by: string }>(),
    );
  } catch (error) {
    reply = Promise.reject(error as Error);
  }
  return reply.then(
    (answer) => {
      if (frozen) return false;
      if (answer?.id !== id) {
        misrouted++;
        if (misroutedSample.length < 20) misroutedSample.push(`${id} got ${JSON.stringify(answer)}`);
        records.settle(seq, 'misrouted', Date.now());
        return false;
      }
      records.settle(seq, 'reply', Date.now());
      if (arrangement === TALLY) tallies.acked[tally]!.push(n);
      return true;
    },
    (error: unknown) => {
      if (!frozen) records.settle(seq, kindOf(error), Date.now());
      const reason = isZLinkError(error)
        ? (error.details as { reason?: unknown } | undefined)?.reason
        : undefined;
      if (isZLinkError(error, 'NotFound') || reason === 'ownerLeaseGone') {
        if (arrangement === OBJECTS) recreate('spot', room);
        else if (arrangement === TALLY) recreate('actor', tally);
      }
      return false;
    },
  );
}

async function lane(arrangement: Arrangement, index = 0): Promise<void> {
  while (running) {
    // A call that fails at once (NotFound with no peer, Shutdown) settles in a microtask: after a
    // failure let the event loop run before the next call, or the lanes could spin without ever
    // reading a socket.
    if (!(await one(arrangement, index))) await new Promise((r) => setImmediate(r));
  }
}

function summary(): object {
  const perArrangement = ARRANGEMENTS.map(() => ({
    started: 0,
    terminals: {} as Record<string, number>,
    hist: new Array<number>(HIST_MAX + 2).fill(0),
  }));
  const zeroTerminal: string[] = [];
  const failures: [number, number, string, number, number, string | null][] = [];
  for (let seq = 0; seq < records.size; seq++) {
    const a = perArrangement[records.arrangement[seq]!]!;
    a.started++;
    const t = records.terminal[seq]!;
    if (t === NO_TERMINAL) {
      zeroTerminal.push(requestId(name, seq));
      continue;
    }
    const kind = records.kinds[t]!;
    a.terminals[kind] = (a.terminals[kind] ?? 0) + 1;
    const ms = Math.max(0, Math.round(records.end[seq]! - records.start[seq]!));
    a.hist[Math.min(ms, HIST_MAX + 1)]!++;
    if (t !== REPLY) {
      const target = records.target[seq]!;
      failures.push([
        seq,
        records.arrangement[seq]!,
        kind,
        records.start[seq]!,
        records.end[seq]!,
        target === 0 ? null : records.targets[target]!,
      ]);
    }
  }
  // Starts per 100 ms (epoch ms / 100), so the harness can count the requests of a time window.
  const startsPer100ms: Record<number, number> = {};
  for (let seq = 0; seq < records.size; seq++) {
    const slot = Math.floor(records.start[seq]! / 100);
    startsPer100ms[slot] = (startsPer100ms[slot] ?? 0) + 1;
  }
  const terminals = Buffer.from(records.terminal.subarray(0, records.size)).toString('base64');
  return {
    name,
    started: records.size,
    arrangements: Object.fromEntries(ARRANGEMENTS.map((k, i) => [k, perArrangement[i]])),
    zeroTerminal: { count: zeroTerminal.length, sample: zeroTerminal.slice(0, 20) },
    multiTerminal: {
      count: new Set(records.multi).size,
      sample: [...new Set(records.multi)].slice(0, 20).map((s) => requestId(name, s)),
    },
    misrouted: { count: misrouted, sample: misroutedSample },
    moves,
    tallies,
    kinds: records.kinds,
    startsPer100ms,
    terminals,
    failures,
  };
}

let lanes: Promise<void>[] = [];
let ticker: NodeJS.Timeout | undefined;

async function stop(): Promise<void> {
  running = false;
  clearInterval(ticker);
  // Grace: one request timeout (+1 s for timers on a busy machine) for what is still in flight.
  const grace = new Promise<void>((r) => setTimeout(r, REQUEST_TIMEOUT_MS + 1000));
  await Promise.race([Promise.all(lanes), grace]);
  // A move ends by its own deadline, or (past its go) once the store answers: give them that long.
  for (let waited = 0; moves.pending > 0 && waited < 15000; waited += 100)
    await new Promise((r) => setTimeout(r, 100));
  frozen = true;
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(summary()));
  say({ type: 'done', file });
}

/**
 * After the faults: every tally answers a read, through get-or-create rounds (a takeover once its dead
 * owner's lease lapsed, a restore from the State Store), within `TALLY_RESTORE_MS`.
 */
async function bringBackTallies(): Promise<void> {
  const started = Date.now();
  const result: TallyRestore = { ms: 0, rounds: 0, held: {}, unread: {} };
  let left = [...TALLIES];
  while (left.length > 0 && Date.now() - started < TALLY_RESTORE_MS) {
    if (result.rounds++ > 0) await new Promise((r) => setTimeout(r, 250));
    await Promise.all(
      left.map(async (id) => {
        try {
          await objects.getOrCreateActor(TALLY_TYPE, id);
          result.held[id] = await route.toActor(id).request(TALLY_READ, null).async<TallyState>();
          delete result.unread[id];
        } catch (error) {
          const reason = isZLinkError(error) ? (error.details as { reason?: unknown })?.reason : undefined;
          result.unread[id] = `${kindOf(error)}${reason === undefined ? '' : ` ${String(reason)}`}`;
        }
      }),
    );
    left = left.filter((id) => !(id in result.held));
  }
  result.ms = Date.now() - started;
  const file = join(dir, 'tallies.json');
  writeFileSync(file, JSON.stringify(result));
  say({ type: 'tallies', file, ms: result.ms });
}

process.stdin.setEncoding('utf8');
let buffer = '';
process.stdin.on('data', (chunk: string) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const command = JSON.parse(buffer.slice(0, nl)) as { type: string; kind?: 'spot' | 'actor'; id?: string };
    buffer = buffer.slice(nl + 1);
    if (command.type === 'relocate' && running && command.id) {
      relocate(command.kind ?? 'spot', command.id);
    } else if (command.type === 'run' && !running) {
      running = true;
      lanes = [
        ...Array.from({ length: perArrangement }, () => lane(0)),
        ...Array.from({ length: perArrangement }, () => lane(1)),
        ...Array.from({ length: ROOM_INFLIGHT }, () => lane(OBJECTS)),
        ...TALLIES.map((_, i) => lane(TALLY, i)),
      ];
      const tick = () =>
        say({
          type: 'tick',
          started: records.size,
          inFlight: records.size - records.settled,
          counts: records.counts,
        });
      ticker = setInterval(tick, 1000);
    } else if (command.type === 'stop') {
      stop().catch((error: unknown) => say({ type: 'fatal', message: String(error) }));
    } else if (command.type === 'tallies') {
      bringBackTallies().catch((error: unknown) => say({ type: 'fatal', message: String(error) }));
    }
  }
});

try {
  await runtime.waitForCandidates(CS_CHANNEL, 4, 30000);
  await runtime.waitForCandidates(MESH_CHANNEL, 4, 30000);
  // Both clients get-or-create every room and tally (one activation each, placed among the servers).
  await Promise.all([
    ...ROOMS.map((room) => objects.getOrCreateSpot(ROOM_TYPE, room)),
    ...TALLIES.map((tally) => objects.getOrCreateActor(TALLY_TYPE, tally)),
  ]);
  const inflight = perArrangement * 2 + ROOM_INFLIGHT + TALLIES.length;
  say({ type: 'ready', name, pid: process.pid, inflight });
} catch (error) {
  say({ type: 'fatal', message: String(error) });
  process.exit(1);
}
