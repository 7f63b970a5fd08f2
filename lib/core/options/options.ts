import {
  type ClientServerChannelOptions,
  type ClientServerRegistration,
  type NormalizedClientServerChannel,
  normalizeClientServer,
} from './client-server-options.js';
import { type NormalizedSecurity, type SecurityOptions, normalizeSecurity } from './security-options.js';
import { configurationError } from '../errors.js';
import { type MeshOptions, type NormalizedMesh, normalizeMeshes } from './mesh-options.js';
import {
  type FanoutChannelOptions,
  type NormalizedFanoutChannel,
  normalizeFanout,
} from './fanout-options.js';
import {
  type LocationStoreOptions,
  type NormalizedLocationStore,
  type NormalizedRelocationStore,
  type RelocationStoreOptions,
  normalizeLocationStore,
  normalizeRelocationStore,
} from './store-options.js';
import { checkKeys, isRecord, positiveInt } from '../option-checks.js';
import {
  type NormalizedStateStore,
  type StateStoreOptions,
  normalizeStateStores,
} from './state-store-options.js';
import {
  type NormalizedSessionListener,
  type SessionListenerOptions,
  normalizeSessions,
} from './session-options.js';

export {
  DEFAULT_WEIGHT,
  WEIGHT_MAX,
  WEIGHT_MIN,
  isValidWeight,
  validateWeight,
  checkNodeRid,
  type ListenOptions,
  type NormalizedListen,
} from '../option-checks.js';
export type {
  ClientServerChannelOptions,
  ClientServerClientOptions,
  ClientServerRegistration,
  ClientServerServerOptions,
  NormalizedClientServerChannel,
} from './client-server-options.js';
export type { EndpointOptions, NormalizedEndpoint } from './endpoint-options.js';
export type {
  FanoutChannelOptions,
  FanoutPublisherOptions,
  FanoutSubscriberOptions,
  FanoutTopic,
  NormalizedFanoutChannel,
  SubscribedTopic,
} from './fanout-options.js';
export { topicBytes } from './fanout-options.js';
export type {
  LocationStoreOptions,
  NormalizedLocationStore,
  NormalizedRelocationStore,
  NormalizedStoreSource,
  RelocationStoreOptions,
  StoreConnectionOptions,
} from './store-options.js';
export type { NormalizedObjectOptions, ObjectOptions } from './object-options.js';
export type {
  NormalizedStateStore,
  NormalizedStateStoreSource,
  StateStoreOptions,
} from './state-store-options.js';
export type { NormalizedSessionListener, SessionListenerOptions } from './session-options.js';
export type {
  NormalizedSessionListen,
  NormalizedSessionTls,
  SessionListenKind,
  SessionListenOptions,
  SessionTlsOptions,
  SessionTlsVersion,
} from './session-listen-options.js';
export { secureContextOptions } from './session-listen-options.js';
export {
  DEFAULT_SESSION_FRAME_BYTES,
  DEFAULT_SESSION_SEAL_TIMEOUT_MS,
  MAX_SESSION_FRAME_BYTES,
  MIN_SESSION_PENDING_BYTES,
} from './session-options.js';
export {
  CUTOVER_DEADLINE_MS,
  DEFAULT_MESSAGE_FOLLOW_DURATION_MS,
  DEFAULT_OBJECT_QUEUE_LIMIT,
  DEFAULT_ROUTE_CACHE_MAX_AGE_MS,
  MAX_FOLLOW_HOPS,
  OBJECT_CACHE_FOLLOW_GAP_MS,
  cacheFollowProblem,
} from './object-options.js';
export type {
  MeshChannelOptions,
  MeshOptions,
  MeshPeerOptions,
  NormalizedMesh,
  NormalizedMeshChannel,
} from './mesh-options.js';

/**
 * Options: their shapes, their defaults and their validation, all here. `normalizeOptions` turns
 * what a user wrote into a frozen, fully defaulted topology or throws `Configuration` naming the
 * field to change.
 */

export interface ZLinkOptions {
  meshes?: Record<string, MeshOptions>;
  clientServer?: Record<string, ClientServerChannelOptions> | ClientServerRegistration[];
  fanout?: Record<string, FanoutChannelOptions>;
  /**
   * End-user session listeners, by name: game clients speaking the session wire (docs/sessions-wire.md)
   * over TCP, TLS or WebSocket, each listener riding on the object mesh to bind its sessions to Actors.
   */
  sessions?: Record<string, SessionListenerOptions>;
  /**
   * Where automatic discovery finds others and where this process publishes itself
   * (docs/protocol.md#discovery).
   */
  locationStore?: LocationStoreOptions;
  /**
   * Where a move of a Spot or Actor leaves its records (docs/protocol.md#relocation-store): registered apart
   * from the Location Store, which it needs; it may share its Redis but needs its own `keyPrefix`. Nothing
   * uses it yet. @default none
   */
  relocationStore?: RelocationStoreOptions;
  /**
   * State Stores for persistent Spots and Actors, by name: what a class's `persist.store` names (the only
   * one when it names none). Each is `{ redis, keyPrefix? }` or `{ cluster, keyPrefix? }` (a Redis the
   * framework connects to, keys under `zlink-state` unless set), or `{ instance }`, a `StateStore` such as
   * `new MemoryStateStore()`. Checked at startup against the classes' `persist` options; nothing reads or
   * writes state through them yet (docs/decisions.md#durable-state). @default none
   */
  stateStores?: Record<string, StateStoreOptions>;
  /** Default deadline of a request (and of a send waiting for queue space). @default 30000 */
  requestTimeoutMs?: number;
  /** Handlers running at once in this process (the application job queue). @default 1024 */
  handlerConcurrency?: number;
  /** Records a socket's source-local send queue holds before callers wait. @default 10000 */
  sendQueueLimit?: number;
  /** How long a drain waits for accepted work before closing anyway. @default 10000 */
  drainTimeoutMs?: number;
  /**
   * `auto`: when the application registered OpenTelemetry (`@opentelemetry/api`: an SDK, a context
   * manager or a propagator) before the runtime starts, calls carry the caller's active trace context
   * (W3C traceparent/tracestate, a framework field, never metadata) and handlers run inside it.
   * `off`: never loaded, never carried. @default 'auto'
   */
  tracing?: 'auto' | 'off';
  /**
   * CURVE encryption and authentication on this runtime's sockets: every RouteMesh link is encrypted,
   * each peer proves the key its NodeRid is known by, and a key not known here is refused.
   * @default none (plain ZMTP)
   */
  security?: SecurityOptions;
}
export interface NormalizedOptions {
  readonly meshes: ReadonlyMap<string, NormalizedMesh>;
  readonly clientServer: ReadonlyMap<string, NormalizedClientServerChannel>;
  readonly fanout: ReadonlyMap<string, NormalizedFanoutChannel>;
  readonly sessions: ReadonlyMap<string, NormalizedSessionListener>;
  /** Set when a store is registered: servers and MeshNodes then publish descriptors under a lease. */
  readonly locationStore: NormalizedLocationStore | undefined;
  /** Set when a Relocation Store is registered (then a Location Store is too, with another prefix). */
  readonly relocationStore: NormalizedRelocationStore | undefined;
  /** The State Stores by name; empty when none is registered. */
  readonly stateStores: ReadonlyMap<string, NormalizedStateStore>;
  readonly requestTimeoutMs: number;
  readonly handlerConcurrency: number;
  readonly sendQueueLimit: number;
  readonly drainTimeoutMs: number;
  readonly tracing: 'auto' | 'off';
  readonly security: NormalizedSecurity;
}

/**
 * Connect wait for a ClientServer call with no ready server yet: min(request timeout, 5 s)
 * (docs/protocol.md#when-there-is-no-candidate).
 */
export const CANDIDATE_WAIT_CAP_MS = 5000;

const TOP_KEYS = [
  'meshes',
  'clientServer',
  'fanout',
  'sessions',
  'locationStore',
  'relocationStore',
  'stateStores',
  'requestTimeoutMs',
  'handlerConcurrency',
  'sendQueueLimit',
  'drainTimeoutMs',
  'tracing',
  'security',
];

function checkChannelNames(options: ZLinkOptions, clientServer: ReadonlyMap<string, unknown>): void {
  const seen = new Map<string, string>();
  const claim = (channel: string, field: string): void => {
    const previous = seen.get(channel);
    if (previous) {
      throw configurationError(
        field,
        `ChannelName '${channel}' is already registered at ${previous}; one name must point at one send path`,
      );
    }
    seen.set(channel, field);
  };
  for (const channel of clientServer.keys()) claim(channel, `clientServer.${channel}`);
  if (options.meshes !== undefined) {
    if (!isRecord(options.meshes)) throw configurationError('meshes', 'must be an object keyed by MeshName');
    for (const [mesh, m] of Object.entries(options.meshes)) {
      if (!isRecord(m)) throw configurationError(`meshes.${mesh}`, 'must be an object');
      const channels = (m as Record<string, unknown>).channels;
      if (channels === undefined) continue;
      if (!isRecord(channels))
        throw configurationError(`meshes.${mesh}.channels`, 'must be an object keyed by ChannelName');
      for (const channel of Object.keys(channels)) claim(channel, `meshes.${mesh}.channels.${channel}`);
    }
  }
  if (options.fanout !== undefined) {
    if (!isRecord(options.fanout))
      throw configurationError('fanout', 'must be an object keyed by ChannelName');
    for (const channel of Object.keys(options.fanout)) claim(channel, `fanout.${channel}`);
  }
}

/** The key prefixes the Location and Relocation Stores use on a Redis, each with the field that set it. */
function redisPrefixes(
  ...stores: [NormalizedLocationStore | undefined, NormalizedRelocationStore | undefined]
): Map<string, string> {
  const fields = ['locationStore.keyPrefix', 'relocationStore.keyPrefix'];
  const taken = new Map<string, string>();
  stores.forEach((store, i) => {
    if (store && store.source.kind !== 'instance') taken.set(store.keyPrefix, fields[i]!);
  });
  return taken;
}

export function normalizeOptions(options: ZLinkOptions | undefined): NormalizedOptions {
  const raw = (options ?? {}) as ZLinkOptions;
  if (!isRecord(raw)) throw configurationError('options', 'must be an object');
  checkKeys('options', raw as Record<string, unknown>, TOP_KEYS);
  const locationStore = normalizeLocationStore(raw.locationStore);
  const relocationStore = normalizeRelocationStore(raw.relocationStore, locationStore);
  const stateStores = normalizeStateStores(raw.stateStores, redisPrefixes(locationStore, relocationStore));
  const security = normalizeSecurity(raw.security);
  const curve = security.curve !== undefined;
  const clientServer = normalizeClientServer(raw.clientServer, locationStore !== undefined, curve);
  checkChannelNames(raw, clientServer);
  const meshes = normalizeMeshes(raw.meshes, locationStore !== undefined, curve);
  const fanout = normalizeFanout(raw.fanout, locationStore !== undefined, curve);
  const sessions = normalizeSessions(raw.sessions, meshes);
  const tracing = raw.tracing ?? 'auto';
  if (tracing !== 'auto' && tracing !== 'off')
    throw configurationError('tracing', `must be 'auto' or 'off', got ${String(tracing)}`);
  // Without endpoints (and no local server to reach), a Client could only use automatic discovery, which
  // needs a Location Store (docs/protocol.md#location-store): fail now rather than let every call wait for
  // nothing.
  for (const cs of clientServer.values()) {
    if (cs.client && cs.client.discovery === 'manual' && cs.client.connect.length === 0 && !cs.server) {
      throw configurationError(
        `clientServer.${cs.channel}.client.connect`,
        "no server endpoint and no local Server role; list endpoints or use discovery: 'auto'",
      );
    }
  }
  return Object.freeze({
    meshes,
    clientServer,
    fanout,
    sessions,
    locationStore,
    relocationStore,
    stateStores,
    requestTimeoutMs: positiveInt('requestTimeoutMs', raw.requestTimeoutMs, 30000),
    handlerConcurrency: positiveInt('handlerConcurrency', raw.handlerConcurrency, 1024),
    sendQueueLimit: positiveInt('sendQueueLimit', raw.sendQueueLimit, 10000),
    drainTimeoutMs: positiveInt('drainTimeoutMs', raw.drainTimeoutMs, 10000),
    tracing,
    security,
  });
}
