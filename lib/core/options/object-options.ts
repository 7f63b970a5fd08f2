import { configurationError } from '../errors.js';
import { checkKeys, isRecord, nonNegativeInt, positiveInt } from '../option-checks.js';

/**
 * The `meshes.<mesh>.objects` option: the Spot and Actor settings of the one mesh of a runtime whose
 * `objectRole` is `client` or `server` (docs/architecture.md#the-object-layer;
 * docs/protocol.md#the-route-cache, docs/protocol.md#message-follow).
 */

export interface ObjectOptions {
  /**
   * How long a confirmed Ready route (owner and fences) may be reused without reading the Location
   * Store, in ms; an entry also ends with the owner lease's admission deadline, whichever is earlier.
   * `0`: no route cache, every call resolves in the store. With Message Follow on, it must be at least
   * `OBJECT_CACHE_FOLLOW_GAP_MS` (5000) shorter than `messageFollowDurationMs`. @default 15000
   */
  routeCacheMaxAgeMs?: number;
  /**
   * How long, in ms, the source of a committed relocation relays messages that still reach it to the
   * new owner (Message Follow). `0`: off, such a message ends `Unavailable`. @default 30000
   */
  messageFollowDurationMs?: number;
  /**
   * Messages one object's queue holds before a further one is refused with `Rejected` (never a
   * silent drop). @default 1024
   */
  objectQueueLimit?: number;
  /**
   * Whether the node a moved object left tells each sender whose message it relayed (once per route),
   * so that sender drops its stale route at once and its next call goes straight to the new owner.
   * Off, the detour goes on until the sender's cached route expires: a cost in latency, never in
   * correctness — for measuring the detour, and for tests. @default true
   */
  messageFollowNotice?: boolean;
  /**
   * What `runtime.drain()` (and so a graceful stop: `app.close()`, SIGTERM with shutdown hooks) does
   * with this object server's objects (docs/objects.md#rolling-restarts). `'relocate'` first moves
   * every object of a relocatable class to the other object servers hosting its type — a rolling
   * restart that closes no room — and releases at close only what could not move (no other server for
   * its type, a class that is not relocatable, a move that failed or ran out of time); a stop then takes
   * up to `drainTimeoutMs` more. `'deactivate'` moves nothing: every object is released when the runtime
   * closes (`onDeactivate(ctx, 'shutdown')`, its state gone). @default 'relocate'
   */
  onDrain?: 'deactivate' | 'relocate';
  /**
   * The largest Logical Multicast event a publish takes, in bytes of its msgpack encoding; a larger
   * one ends `InvalidArgument` before anything is sent. @default 1048576 (1 MiB)
   */
  multicastMaxEventBytes?: number;
}

export interface NormalizedObjectOptions {
  readonly routeCacheMaxAgeMs: number;
  readonly messageFollowDurationMs: number;
  readonly objectQueueLimit: number;
  readonly messageFollowNotice: boolean;
  readonly onDrain: 'deactivate' | 'relocate';
  readonly multicastMaxEventBytes: number;
}

/** @default 15000 */
export const DEFAULT_ROUTE_CACHE_MAX_AGE_MS = 15000;
/** @default 30000 */
export const DEFAULT_MESSAGE_FOLLOW_DURATION_MS = 30000;
/** @default 1024 */
export const DEFAULT_OBJECT_QUEUE_LIMIT = 1024;
/** @default 1048576 */
export const DEFAULT_MULTICAST_MAX_EVENT_BYTES = 1 << 20;
/**
 * With both positive, a cached route must expire at least this long before the Message Follow route of a move
 * closes, so a stale entry never outlives the detour it relies on (docs/protocol.md#the-route-cache).
 */
export const OBJECT_CACHE_FOLLOW_GAP_MS = 5000;
/**
 * The longest Message Follow chain (docs/protocol.md#message-follow); fixed by the protocol, not an option.
 */
export const MAX_FOLLOW_HOPS = 8;
/**
 * How long the source waits, from the go it sends the target, for the move's commit before it reads
 * the store to learn how the move ended (docs/protocol.md#relocation-steps); not an option.
 */
export const CUTOVER_DEADLINE_MS = 1000;

const OBJECT_KEYS = [
  'routeCacheMaxAgeMs',
  'messageFollowDurationMs',
  'objectQueueLimit',
  'messageFollowNotice',
  'onDrain',
  'multicastMaxEventBytes',
];

/**
 * What is wrong with this pair of cache age and follow duration (ms), `undefined` when nothing is:
 * one rule for startup (`Configuration`) and for a later change at run time (`InvalidArgument`).
 */
export function cacheFollowProblem(
  routeCacheMaxAgeMs: number,
  messageFollowDurationMs: number,
): string | undefined {
  if (routeCacheMaxAgeMs === 0 || messageFollowDurationMs === 0) return undefined;
  const longest = messageFollowDurationMs - OBJECT_CACHE_FOLLOW_GAP_MS;
  if (routeCacheMaxAgeMs <= longest) return undefined;
  return (
    `a cached route must expire at least ${OBJECT_CACHE_FOLLOW_GAP_MS} ms before Message Follow ends: ` +
    `routeCacheMaxAgeMs ${routeCacheMaxAgeMs} must be <= messageFollowDurationMs ` +
    `${messageFollowDurationMs} - ${OBJECT_CACHE_FOLLOW_GAP_MS} = ${longest} (or set either to 0)`
  );
}

/**
 * The object settings of mesh `field` (`meshes.<mesh>`): the defaults for an object mesh, `undefined`
 * for a plain one (`objectRole: 'none'`), where an `objects` block is refused rather than ignored.
 */
export function normalizeObjects(
  field: string,
  value: unknown,
  objectRole: 'none' | 'client' | 'server',
): NormalizedObjectOptions | undefined {
  const f = `${field}.objects`;
  if (objectRole === 'none') {
    if (value !== undefined)
      throw configurationError(f, "needs objectRole 'client' or 'server' on this mesh (it is 'none')");
    return undefined;
  }
  const raw = value ?? {};
  if (!isRecord(raw))
    throw configurationError(
      f,
      'must be an object { routeCacheMaxAgeMs?, messageFollowDurationMs?, objectQueueLimit?, messageFollowNotice?, onDrain?, multicastMaxEventBytes? }',
    );
  checkKeys(f, raw, OBJECT_KEYS);
  const routeCacheMaxAgeMs = nonNegativeInt(
    `${f}.routeCacheMaxAgeMs`,
    raw.routeCacheMaxAgeMs,
    DEFAULT_ROUTE_CACHE_MAX_AGE_MS,
  );
  const messageFollowDurationMs = nonNegativeInt(
    `${f}.messageFollowDurationMs`,
    raw.messageFollowDurationMs,
    DEFAULT_MESSAGE_FOLLOW_DURATION_MS,
  );
  const problem = cacheFollowProblem(routeCacheMaxAgeMs, messageFollowDurationMs);
  if (problem !== undefined) throw configurationError(`${f}.routeCacheMaxAgeMs`, problem);
  const { messageFollowNotice = true } = raw;
  if (typeof messageFollowNotice !== 'boolean')
    throw configurationError(`${f}.messageFollowNotice`, 'must be a boolean');
  const { onDrain = 'relocate' } = raw;
  if (onDrain !== 'deactivate' && onDrain !== 'relocate')
    throw configurationError(`${f}.onDrain`, "must be 'deactivate' or 'relocate'");
  return Object.freeze({
    messageFollowNotice,
    onDrain,
    routeCacheMaxAgeMs,
    messageFollowDurationMs,
    objectQueueLimit: positiveInt(`${f}.objectQueueLimit`, raw.objectQueueLimit, DEFAULT_OBJECT_QUEUE_LIMIT),
    multicastMaxEventBytes: positiveInt(
      `${f}.multicastMaxEventBytes`,
      raw.multicastMaxEventBytes,
      DEFAULT_MULTICAST_MAX_EVENT_BYTES,
    ),
  });
}
