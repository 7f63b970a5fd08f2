/**
 * What the chaos harness (`npm run chaos`) and its processes share: names, timing and the Location
 * Store options. Every process finds the others through the private Redis (`discovery: 'auto'`).
 */
import type { ZLinkOptions } from '../../lib/index.js';

/** The ClientServer channel every server serves and every client calls. */
export const CS_CHANNEL = 'ledger';
export const CS_PACKET = 'ledger.post';
/** The RouteMesh (MeshName) and the mesh ChannelName every server is a Server member of. */
export const MESH = 'chaos';
export const MESH_CHANNEL = 'work';
export const MESH_PACKET = 'work.do';

/** The relocatable Spot type every server hosts (on mesh `chaos`), its request packet, and the rooms. */
export const ROOM_TYPE = 'room';
export const ROOM_PACKET = 'room.post';
export const ROOMS = Array.from({ length: 12 }, (_, i) => `room-${i}`);
/** Object requests each client keeps in flight, on top of the two channel arrangements. */
export const ROOM_INFLIGHT = 32;
/**
 * The persistent Actor type every server hosts (every turn saved before its reply, relocatable), its
 * packets and the tallies. A tally's state is the ops it acknowledged (chaos-tallies.ts); each client
 * keeps one request in flight to each tally.
 */
export const TALLY_TYPE = 'tally';
export const TALLY_ADD = 'tally.add';
export const TALLY_READ = 'tally.read';
export const TALLIES = Array.from({ length: 8 }, (_, i) => `tally-${i}`);
/**
 * The State Store (`stateStores` name and key prefix), on a second private Redis the harness never
 * kills: the Location Store's Redis is emptied mid-run on purpose, and a State Store must be durable — an
 * emptied one cannot keep what it acknowledged.
 */
export const STATE_STORE = 'tallies';
export const STATE_PREFIX = 'chaos-state';
/**
 * How long the end of a run may take to bring every tally back. A tally whose owner was SIGKILLed just
 * before the end (too late to be started again) is taken over only once that owner's lease lapsed:
 * `LEASE.ttlMs` after its last refresh, so about 30 s.
 */
export const TALLY_RESTORE_MS = 45000;
/** The Relocation Store's prefix (on the same private Redis as the Location Store). */
export const MOVES_PREFIX = 'chaos-moves';

/** Deadline of every request. */
export const REQUEST_TIMEOUT_MS = 2000;

/**
 * Owner-lease timing. With the defaults (ttl 10 s) an owner is fenced 6–9 s into a Redis outage and
 * refuses new work (`Rejected`, ServerFenced). The issue expects ready connections to keep working
 * through a 10 s outage (docs/protocol.md#location-store-outage), so the lease outlives it: the fence falls due
 * `ttlMs − marginMs` = 29 s after the start of the last good refresh, i.e. no earlier than ~27 s into
 * an outage. Startup rule: refreshMs + refreshTimeoutMs + marginMs (2000 + 1000 + 1000) < ttlMs.
 * The cost: a SIGKILLed server stays listed up to 30 s, so clients keep dialling dead endpoints.
 */
export const LEASE = { ttlMs: 30000, refreshMs: 2000, refreshTimeoutMs: 1000, marginMs: 1000 } as const;

export const KEY_PREFIX = 'chaos';

/**
 * How long a process waits at startup for the Location Store's first answer. A server started again
 * during the outage must wait it out: with the default (10 s) one that began to connect just after the
 * kill gave up before ioredis, by then retrying every 2 s, reconnected to the Redis that came back after
 * 10 s. As long as the lease, which outlives the outages this run makes.
 */
export const STARTUP_TIMEOUT_MS = LEASE.ttlMs;

export function storeOptions(redisUrl: string): NonNullable<ZLinkOptions['locationStore']> {
  return {
    redis: redisUrl,
    keyPrefix: KEY_PREFIX,
    lease: LEASE,
    fullReadIntervalMs: 1000,
    startupTimeoutMs: STARTUP_TIMEOUT_MS,
  };
}

/** A request id is `<client>-<seq>` (both arrangements of a client share one sequence). */
export function requestId(client: string, seq: number): string {
  return `${client}-${seq}`;
}

/** Terminal kinds a client records, by index (0 = no terminal yet). */
export const NO_TERMINAL = 0;
export const REPLY = 1;
