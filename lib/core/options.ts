import { type NormalizedSecurity, type SecurityOptions, normalizeSecurity } from './security-options.js';
import { configurationError } from './errors.js';
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
import {
  type ListenOptions,
  type NormalizedListen,
  checkEndpoint,
  checkKeys,
  checkName,
  isRecord,
  normalizeListen,
  positiveInt,
  validateWeight,
} from './option-checks.js';

export {
  DEFAULT_WEIGHT,
  WEIGHT_MAX,
  WEIGHT_MIN,
  isValidWeight,
  validateWeight,
  checkNodeRid,
  type ListenOptions,
  type NormalizedListen,
} from './option-checks.js';
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
  ObjectRole,
} from './mesh-options.js';

/**
 * Options: their shapes, their defaults and their validation, all here. `normalizeOptions` turns
 * what a user wrote into a frozen, fully defaulted topology or throws `Configuration` naming the
 * field to change.
 */

export interface ClientServerClientOptions {
  /** Manual server endpoints, `tcp://host:port`. */
  connect?: string[];
  /**
   * `manual`: `connect` (and the local Server) only. `auto`: also every Server of this ChannelName
   * that the Location Store lists (needs `locationStore`). @default 'manual'
   */
  discovery?: 'manual' | 'auto';
}

export interface ClientServerServerOptions {
  listen?: ListenOptions;
  /** 0..10000. @default 100 */
  weight?: number;
  /** Server identity; keep it stable across restarts of the same server. @default `<hostname>-<pid>-<random per runtime>` */
  rid?: string;
}

export interface ClientServerChannelOptions {
  client?: ClientServerClientOptions;
  server?: ClientServerServerOptions;
}

/** The array form: one registration per entry; a Client and a Server entry for one channel merge. */
export interface ClientServerRegistration extends ClientServerChannelOptions {
  channel: string;
}

export interface ZLinkOptions {
  meshes?: Record<string, MeshOptions>;
  clientServer?: Record<string, ClientServerChannelOptions> | ClientServerRegistration[];
  fanout?: Record<string, FanoutChannelOptions>;
  /** Where automatic discovery finds others and where this process publishes itself (guide §6). */
  locationStore?: LocationStoreOptions;
  /**
   * Where a move of a Spot or Actor leaves its records (guide §6.1): registered apart from the
   * Location Store, which it needs; it may share its Redis but needs its own `keyPrefix`. Nothing
   * uses it yet. @default none
   */
  relocationStore?: RelocationStoreOptions;
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
export interface NormalizedClientServerChannel {
  readonly channel: string;
  readonly client: { readonly connect: readonly string[]; readonly discovery: 'manual' | 'auto' } | undefined;
  readonly server:
    | { readonly listen: NormalizedListen; readonly weight: number; readonly rid: string | undefined }
    | undefined;
}
export interface NormalizedOptions {
  readonly meshes: ReadonlyMap<string, NormalizedMesh>;
  readonly clientServer: ReadonlyMap<string, NormalizedClientServerChannel>;
  readonly fanout: ReadonlyMap<string, NormalizedFanoutChannel>;
  /** Set when a store is registered: servers and MeshNodes then publish descriptors under a lease. */
  readonly locationStore: NormalizedLocationStore | undefined;
  /** Set when a Relocation Store is registered (then a Location Store is too, with another prefix). */
  readonly relocationStore: NormalizedRelocationStore | undefined;
  readonly requestTimeoutMs: number;
  readonly handlerConcurrency: number;
  readonly sendQueueLimit: number;
  readonly drainTimeoutMs: number;
  readonly tracing: 'auto' | 'off';
  readonly security: NormalizedSecurity;
}

/** Connect wait for a ClientServer call with no ready server yet: min(request timeout, 5 s) (02 §3). */
export const CANDIDATE_WAIT_CAP_MS = 5000;

const TOP_KEYS = [
  'meshes',
  'clientServer',
  'fanout',
  'locationStore',
  'relocationStore',
  'requestTimeoutMs',
  'handlerConcurrency',
  'sendQueueLimit',
  'drainTimeoutMs',
  'tracing',
  'security',
];

type Registration = { field: string; channel: string; value: Record<string, unknown> };

function clientServerRegistrations(value: unknown): Registration[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) {
    return value.map((entry, i) => {
      const field = `clientServer[${i}]`;
      if (!isRecord(entry))
        throw configurationError(field, 'must be an object { channel, client?, server? }');
      checkKeys(field, entry, ['channel', 'client', 'server']);
      return { field, channel: checkName(`${field}.channel`, entry.channel), value: entry };
    });
  }
  if (!isRecord(value))
    throw configurationError('clientServer', 'must be an object keyed by ChannelName, or an array');
  return Object.entries(value).map(([channel, entry]) => {
    const field = `clientServer.${channel}`;
    checkName(field, channel);
    if (!isRecord(entry)) throw configurationError(field, 'must be an object { client?, server? }');
    checkKeys(field, entry, ['client', 'server']);
    return { field, channel, value: entry };
  });
}

function normalizeClientServer(
  value: unknown,
  hasStore: boolean,
): Map<string, NormalizedClientServerChannel> {
  const channels = new Map<
    string,
    {
      client?: NormalizedClientServerChannel['client'];
      server?: NormalizedClientServerChannel['server'];
      clientField?: string;
      serverField?: string;
    }
  >();
  for (const { field, channel, value: entry } of clientServerRegistrations(value)) {
    const slot = channels.get(channel) ?? {};
    channels.set(channel, slot);
    if (entry.client !== undefined) {
      const f = `${field}.client`;
      if (slot.clientField)
        throw configurationError(
          f,
          `Client role for '${channel}' is already registered at ${slot.clientField}`,
        );
      if (!isRecord(entry.client)) throw configurationError(f, 'must be an object { connect?, discovery? }');
      checkKeys(f, entry.client, ['connect', 'discovery']);
      const connect = entry.client.connect ?? [];
      if (!Array.isArray(connect)) throw configurationError(`${f}.connect`, 'must be an array of endpoints');
      const discovery = entry.client.discovery ?? 'manual';
      if (discovery !== 'manual' && discovery !== 'auto')
        throw configurationError(`${f}.discovery`, `must be 'manual' or 'auto', got ${String(discovery)}`);
      // 03 §3.3: automatic discovery without a store fails before any listener binds.
      if (discovery === 'auto' && !hasStore)
        throw configurationError(`${f}.discovery`, "'auto' needs a locationStore");
      slot.client = {
        connect: Object.freeze(connect.map((e, i) => checkEndpoint(`${f}.connect[${i}]`, e))),
        discovery,
      };
      slot.clientField = f;
    }
    if (entry.server !== undefined) {
      const f = `${field}.server`;
      if (slot.serverField)
        throw configurationError(
          f,
          `Server role for '${channel}' is already registered at ${slot.serverField}`,
        );
      if (!isRecord(entry.server))
        throw configurationError(f, 'must be an object { listen?, weight?, rid? }');
      checkKeys(f, entry.server, ['listen', 'weight', 'rid']);
      const rid = entry.server.rid === undefined ? undefined : checkName(`${f}.rid`, entry.server.rid);
      slot.server = {
        listen: normalizeListen(`${f}.listen`, entry.server.listen),
        weight: validateWeight(`${f}.weight`, entry.server.weight),
        rid,
      };
      slot.serverField = f;
    }
    if (entry.client === undefined && entry.server === undefined) {
      throw configurationError(field, 'registers neither a client nor a server role');
    }
  }
  const out = new Map<string, NormalizedClientServerChannel>();
  for (const [channel, slot] of channels)
    out.set(channel, Object.freeze({ channel, client: slot.client, server: slot.server }));
  return out;
}
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

export function normalizeOptions(options: ZLinkOptions | undefined): NormalizedOptions {
  const raw = (options ?? {}) as ZLinkOptions;
  if (!isRecord(raw)) throw configurationError('options', 'must be an object');
  checkKeys('options', raw as Record<string, unknown>, TOP_KEYS);
  const locationStore = normalizeLocationStore(raw.locationStore);
  const relocationStore = normalizeRelocationStore(raw.relocationStore, locationStore);
  const clientServer = normalizeClientServer(raw.clientServer, locationStore !== undefined);
  checkChannelNames(raw, clientServer);
  const security = normalizeSecurity(raw.security);
  const curve = security.curve !== undefined;
  const meshes = normalizeMeshes(raw.meshes, locationStore !== undefined, curve);
  const fanout = normalizeFanout(raw.fanout, locationStore !== undefined);
  // CURVE on ClientServer listeners and fanout publishers comes next (docs/decisions.md "CURVE"):
  // until then such a runtime is refused rather than left talking in clear beside its encrypted mesh.
  if (curve && clientServer.size > 0)
    throw configurationError(
      'security.curve',
      'covers RouteMesh only so far; clientServer channels are not encrypted yet',
    );
  if (curve && fanout.size > 0)
    throw configurationError(
      'security.curve',
      'covers RouteMesh only so far; fanout channels are not encrypted yet',
    );
  const tracing = raw.tracing ?? 'auto';
  if (tracing !== 'auto' && tracing !== 'off')
    throw configurationError('tracing', `must be 'auto' or 'off', got ${String(tracing)}`);
  // Without endpoints (and no local server to reach), a Client could only use automatic discovery,
  // which needs a Location Store (03 §3.3): fail now rather than let every call wait for nothing.
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
    locationStore,
    relocationStore,
    requestTimeoutMs: positiveInt('requestTimeoutMs', raw.requestTimeoutMs, 30000),
    handlerConcurrency: positiveInt('handlerConcurrency', raw.handlerConcurrency, 1024),
    sendQueueLimit: positiveInt('sendQueueLimit', raw.sendQueueLimit, 10000),
    drainTimeoutMs: positiveInt('drainTimeoutMs', raw.drainTimeoutMs, 10000),
    tracing,
    security,
  });
}
