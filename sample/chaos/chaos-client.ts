/**
 * A chaos client process: a ClientServer client of `ledger`, a RouteMesh client member of `work`
 * (mesh `chaos`) and an Object Client of its `room` Spots, all with `discovery: 'auto'`. On
 * `{type:'run'}` it keeps `inflight` requests in flight (half on each channel arrangement) plus
 * `ROOM_INFLIGHT` to the rooms by global id (`{type:'relocate', id}` moves one while they run), each with a unique id `<name>-<seq>` in its payload, and records
 * for every request its start, its terminal(s) (reply or error code; every settle callback is
 * counted) and the server it was sent to (the `selection` event, tied to the call through
 * AsyncLocalStorage). On `{type:'stop'}` it starts nothing new, waits for what is in flight (one
 * request timeout + 1 s at most), writes its record to `<dir>/<name>.json` and says `done`.
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
  requestId,
  storeOptions,
} from './chaos-config.js';
import { Records } from './chaos-records.js';

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
const ARRANGEMENTS = ['client-server', 'route-mesh', 'objects'] as const;
/** The object arrangement's index (requests to the rooms by global id). */
const OBJECTS = 2;
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
 * A room whose owner died is not brought back by a plain call: once its lease is gone (or the room is
 * missing) a get-or-create takes it over, one at a time per room. Its outcome is the next call's business.
 */
const recreating = new Set<string>();
function recreate(room: string): void {
  if (recreating.has(room)) return;
  recreating.add(room);
  void objects
    .getOrCreateSpot(ROOM_TYPE, room)
    .catch(() => undefined)
    .finally(() => recreating.delete(room));
}

/** The harness's relocations of the rooms, by outcome; `pending` ones had not ended yet. */
const moves = {
  committed: 0,
  aborted: {} as Record<string, number>,
  refused: {} as Record<string, number>,
  pending: 0,
};
function relocate(room: string): void {
  moves.pending++;
  objects
    .relocate(room)
    .then(
      (r) => {
        if (r.outcome === 'committed') moves.committed++;
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
function one(arrangement: 0 | 1 | 2): Promise<boolean> {
  const seq = records.open(arrangement, Date.now());
  const id = requestId(name, seq);
  const room = ROOMS[nextRoom++ % ROOMS.length] as string;
  let reply: Promise<{ id: string; by: string }>;
  try {
    reply = current.run(seq, () =>
      arrangement === 0
        ? route.requestToChannel(CS_CHANNEL, CS_PACKET, { id }).async<{ id: string; by: string }>()
        : arrangement === 1
          ? route.requestToChannel(MESH_CHANNEL, MESH_PACKET, { id }).async<{ id: string; by: string }>()
          : route.toSpot(room).request(ROOM_PACKET, { id }).async<{ id: string; by: string }>(),
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
      return true;
    },
    (error: unknown) => {
      if (!frozen) records.settle(seq, kindOf(error), Date.now());
      const reason = isZLinkError(error)
        ? (error.details as { reason?: unknown } | undefined)?.reason
        : undefined;
      if (arrangement === OBJECTS && (isZLinkError(error, 'NotFound') || reason === 'ownerLeaseGone'))
        recreate(room);
      return false;
    },
  );
}

async function lane(arrangement: 0 | 1 | 2): Promise<void> {
  while (running) {
    // A call that fails at once (NotFound with no peer, Shutdown) settles in a microtask: after a
    // failure let the event loop run before the next call, or the lanes could spin without ever
    // reading a socket.
    if (!(await one(arrangement))) await new Promise((r) => setImmediate(r));
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

process.stdin.setEncoding('utf8');
let buffer = '';
process.stdin.on('data', (chunk: string) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const command = JSON.parse(buffer.slice(0, nl)) as { type: string; id?: string };
    buffer = buffer.slice(nl + 1);
    if (command.type === 'relocate' && running && command.id) {
      relocate(command.id);
    } else if (command.type === 'run' && !running) {
      running = true;
      lanes = [
        ...Array.from({ length: perArrangement }, () => lane(0)),
        ...Array.from({ length: perArrangement }, () => lane(1)),
        ...Array.from({ length: ROOM_INFLIGHT }, () => lane(2)),
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
    }
  }
});

try {
  await runtime.waitForCandidates(CS_CHANNEL, 4, 30000);
  await runtime.waitForCandidates(MESH_CHANNEL, 4, 30000);
  // Both clients get-or-create every room (one activation each, placed among the servers).
  await Promise.all(ROOMS.map((room) => objects.getOrCreateSpot(ROOM_TYPE, room)));
  say({ type: 'ready', name, pid: process.pid, inflight: perArrangement * 2 + ROOM_INFLIGHT });
} catch (error) {
  say({ type: 'fatal', message: String(error) });
  process.exit(1);
}
