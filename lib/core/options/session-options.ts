import { configurationError } from '../errors.js';
import { checkKeys, checkName, isRecord, nonNegativeInt, positiveInt } from '../option-checks.js';
import type { NormalizedMesh } from './mesh-options.js';
import {
  type NormalizedSessionListen,
  type SessionListenOptions,
  checkDistinctPorts,
  normalizeSessionListens,
} from './session-listen-options.js';

/**
 * The `sessions` option: one end-user listener per name (docs/architecture.md#sessions). A listener accepts
 * game clients speaking the session wire (docs/sessions-wire.md) on one or several entries (TCP, TLS,
 * WebSocket: the same handlers and limits) and rides on the one mesh of the runtime that carries Spots
 * and Actors, which it binds its sessions' Actors over.
 */
export interface SessionListenerOptions {
  /**
   * Where game clients connect: one entry, or several (TCP for native clients and WebSocket for
   * browsers, say), each of its own kind. @default one `tcp` entry on a free port on 0.0.0.0
   */
  listen?: SessionListenOptions | readonly SessionListenOptions[];
  /** The MeshName of this runtime's object mesh (`objectRole` `client` or `server`). */
  mesh: string;
  /** The longest frame body a client may send, in bytes (announced in the Welcome). @default 65536 */
  maxFrameBytes?: number;
  /** How long a new connection may take to send its Hello before it is closed. @default 5000 */
  helloTimeoutMs?: number;
  /**
   * How often a client should send a Ping when it has sent nothing else, in ms (announced in the
   * Welcome; the server answers each with a Pong). @default 10000
   */
  heartbeatMs?: number;
  /**
   * A session that sends no whole frame for this long is closed (`idleTimeout`); a frame still arriving
   * counts 1 ms per byte, so one coming in at 1,000 bytes a second or faster keeps the session
   * (docs/sessions.md#idle-timeout). @default 3 × heartbeatMs
   */
  idleTimeoutMs?: number;
  /**
   * Requests awaiting their reply plus messages not yet handled, per session; one more closes the
   * session (`tooManyInFlight`). @default 64
   */
  maxInFlight?: number;
  /**
   * Sessions open at once on this listener, all its entries together; a further connection is closed
   * (`full`). @default 100000
   */
  maxSessions?: number;
  /**
   * Bytes of replies and pushes a session may have waiting for a client that reads slowly; past it the
   * session is closed (`slowConsumer`), so one slow client never holds back the others. @default 1048576
   */
  maxPendingBytes?: number;
  /** How long a drain waits for sessions to close after telling them, before closing them. @default 5000 */
  drainGraceMs?: number;
  /**
   * SessionRelocationSealTimeout: how long a session waits for a moving bound Actor's new route
   * before it is closed (`relocationTimeout`). @default 10000
   */
  sealTimeoutMs?: number;
  /**
   * How long a session whose connection dropped waits for its client to resume it, in ms; past it the
   * session closes (`resumeExpired`). Only for clients that ask for resume in their Hello
   * (docs/sessions.md#resume-after-a-drop). 0 turns resume off. @default 30000
   */
  resumeGraceMs?: number;
}

export interface NormalizedSessionListener {
  readonly listener: string;
  /** At least one entry, in the order given. */
  readonly listen: readonly NormalizedSessionListen[];
  readonly mesh: string;
  readonly maxFrameBytes: number;
  readonly helloTimeoutMs: number;
  readonly heartbeatMs: number;
  readonly idleTimeoutMs: number;
  readonly maxInFlight: number;
  readonly maxSessions: number;
  readonly maxPendingBytes: number;
  readonly drainGraceMs: number;
  readonly sealTimeoutMs: number;
  /** 0 when resume is off. */
  readonly resumeGraceMs: number;
}

/** The largest `maxFrameBytes`: 16 MiB (a game message larger than that belongs in a download). */
export const MAX_SESSION_FRAME_BYTES = 16 * 1024 * 1024;
/**
 * The smallest `maxPendingBytes`: 64 KiB. A client's bytes go to zeromq in messages of a 68th of it
 * (a quarter of the limit over the 17 messages zeromq may hold), at least 963 bytes from here.
 */
export const MIN_SESSION_PENDING_BYTES = 64 * 1024;
/** @default 65536 */
export const DEFAULT_SESSION_FRAME_BYTES = 65536;
/** @default 10000 */
export const DEFAULT_SESSION_SEAL_TIMEOUT_MS = 10000;
/** @default 30000 */
export const DEFAULT_SESSION_RESUME_GRACE_MS = 30000;
/** The longest `resumeGraceMs`: a day (a timer cannot wait much longer, and a seat kept longer is lost). */
export const MAX_SESSION_RESUME_GRACE_MS = 24 * 60 * 60 * 1000;

const LISTENER_KEYS = [
  'listen',
  'mesh',
  'maxFrameBytes',
  'helloTimeoutMs',
  'heartbeatMs',
  'idleTimeoutMs',
  'maxInFlight',
  'maxSessions',
  'maxPendingBytes',
  'drainGraceMs',
  'sealTimeoutMs',
  'resumeGraceMs',
];

function normalizeListener(
  listener: string,
  value: unknown,
  meshes: ReadonlyMap<string, NormalizedMesh>,
): NormalizedSessionListener {
  const field = `sessions.${listener}`;
  if (!isRecord(value)) throw configurationError(field, 'must be an object { listen, mesh, ... }');
  checkKeys(field, value, LISTENER_KEYS);
  const mesh = checkName(`${field}.mesh`, value.mesh);
  const m = meshes.get(mesh);
  if (!m || m.objectRole === 'none') {
    throw configurationError(
      `${field}.mesh`,
      m
        ? `mesh '${mesh}' carries no objects; a session listener rides on the mesh whose objectRole is 'client' or 'server'`
        : `no mesh '${mesh}' in meshes; a session listener rides on this runtime's object mesh`,
    );
  }
  const maxFrameBytes = positiveInt(
    `${field}.maxFrameBytes`,
    value.maxFrameBytes,
    DEFAULT_SESSION_FRAME_BYTES,
  );
  if (maxFrameBytes < 256 || maxFrameBytes > MAX_SESSION_FRAME_BYTES)
    throw configurationError(
      `${field}.maxFrameBytes`,
      `must be 256..${MAX_SESSION_FRAME_BYTES}, got ${maxFrameBytes}`,
    );
  const heartbeatMs = positiveInt(`${field}.heartbeatMs`, value.heartbeatMs, 10000);
  const idleTimeoutMs = positiveInt(`${field}.idleTimeoutMs`, value.idleTimeoutMs, 3 * heartbeatMs);
  if (idleTimeoutMs <= heartbeatMs)
    throw configurationError(
      `${field}.idleTimeoutMs`,
      `must be longer than heartbeatMs (${heartbeatMs}), or a client that pings on time is closed; got ${idleTimeoutMs}`,
    );
  const maxPendingBytes = positiveInt(`${field}.maxPendingBytes`, value.maxPendingBytes, 1024 * 1024);
  if (maxPendingBytes < MIN_SESSION_PENDING_BYTES)
    throw configurationError(
      `${field}.maxPendingBytes`,
      `must be at least ${MIN_SESSION_PENDING_BYTES} (64 KiB), got ${maxPendingBytes}`,
    );
  const resumeGraceMs = nonNegativeInt(
    `${field}.resumeGraceMs`,
    value.resumeGraceMs,
    DEFAULT_SESSION_RESUME_GRACE_MS,
  );
  if (resumeGraceMs > MAX_SESSION_RESUME_GRACE_MS)
    throw configurationError(
      `${field}.resumeGraceMs`,
      `must be 0..${MAX_SESSION_RESUME_GRACE_MS} (a day; 0 = off), got ${resumeGraceMs}`,
    );
  return Object.freeze({
    listener,
    listen: normalizeSessionListens(`${field}.listen`, value.listen),
    mesh,
    maxFrameBytes,
    helloTimeoutMs: positiveInt(`${field}.helloTimeoutMs`, value.helloTimeoutMs, 5000),
    heartbeatMs,
    idleTimeoutMs,
    maxInFlight: positiveInt(`${field}.maxInFlight`, value.maxInFlight, 64),
    maxSessions: positiveInt(`${field}.maxSessions`, value.maxSessions, 100000),
    maxPendingBytes,
    drainGraceMs: positiveInt(`${field}.drainGraceMs`, value.drainGraceMs, 5000),
    sealTimeoutMs: positiveInt(
      `${field}.sealTimeoutMs`,
      value.sealTimeoutMs,
      DEFAULT_SESSION_SEAL_TIMEOUT_MS,
    ),
    resumeGraceMs,
  });
}

/** Every listener of `sessions`, checked against the meshes; `Configuration` naming the field. */
export function normalizeSessions(
  value: unknown,
  meshes: ReadonlyMap<string, NormalizedMesh>,
): ReadonlyMap<string, NormalizedSessionListener> {
  const out = new Map<string, NormalizedSessionListener>();
  if (value === undefined) return out;
  if (!isRecord(value)) throw configurationError('sessions', 'must be an object keyed by listener name');
  for (const [listener, options] of Object.entries(value)) {
    checkName(`sessions.${listener}`, listener);
    out.set(listener, normalizeListener(listener, options, meshes));
  }
  checkDistinctPorts([...out.values()].flatMap((l) => l.listen));
  return out;
}
