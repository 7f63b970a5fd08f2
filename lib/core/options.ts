import { configurationError } from './errors.js';

/**
 * Options: their shapes, their defaults and their validation, all here. `normalizeOptions` turns
 * what a user wrote into a frozen, fully defaulted topology or throws `Configuration` naming the
 * field to change.
 */

export const WEIGHT_MIN = 0;
export const WEIGHT_MAX = 10000;
/** @default 100 */
export const DEFAULT_WEIGHT = 100;

export interface ListenOptions {
  /** @default 0 (a free port; the bound port is what gets advertised) */
  port?: number;
  /** @default '0.0.0.0' */
  bindHost?: string;
  /** Host others use to reach this listener. @default bindHost, or this machine's hostname for a wildcard bind */
  advertiseHost?: string;
}

export interface ClientServerClientOptions {
  /** Manual server endpoints, `tcp://host:port`. */
  connect?: string[];
}

export interface ClientServerServerOptions {
  listen?: ListenOptions;
  /** 0..10000. @default 100 */
  weight?: number;
  /** Server identity; keep it stable across restarts of the same server. @default random per process */
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

export interface MeshChannelOptions {
  role: 'server' | 'client';
  weight?: number;
}

export interface MeshOptions {
  rid?: string;
  listen?: ListenOptions;
  peers?: (string | { endpoint: string; rid?: string })[];
  channels?: Record<string, MeshChannelOptions>;
}

export interface FanoutChannelOptions {
  publisher?: { listen?: ListenOptions; noDrop?: boolean; sendHighWaterMark?: number };
  subscriber?: { connect?: string[]; topics?: string[] };
}

export interface ZLinkOptions {
  meshes?: Record<string, MeshOptions>;
  clientServer?: Record<string, ClientServerChannelOptions> | ClientServerRegistration[];
  fanout?: Record<string, FanoutChannelOptions>;
  locationStore?: { redis: string | Record<string, unknown>; keyPrefix?: string };
  /** Default deadline of a request (and of a send waiting for queue space). @default 30000 */
  requestTimeoutMs?: number;
  /** Handlers running at once in this process (the application job queue). @default 1024 */
  handlerConcurrency?: number;
  /** Records a socket's source-local send queue holds before callers wait. @default 10000 */
  sendQueueLimit?: number;
  /** How long a drain waits for accepted work before closing anyway. @default 10000 */
  drainTimeoutMs?: number;
}

export interface NormalizedListen {
  readonly port: number;
  readonly bindHost: string;
  readonly advertiseHost: string | undefined;
}

export interface NormalizedClientServerChannel {
  readonly channel: string;
  readonly client: { readonly connect: readonly string[] } | undefined;
  readonly server:
    | { readonly listen: NormalizedListen; readonly weight: number; readonly rid: string | undefined }
    | undefined;
}

export interface NormalizedOptions {
  readonly clientServer: ReadonlyMap<string, NormalizedClientServerChannel>;
  readonly requestTimeoutMs: number;
  readonly handlerConcurrency: number;
  readonly sendQueueLimit: number;
  readonly drainTimeoutMs: number;
}

/** Connect wait for a ClientServer call with no ready server yet: min(request timeout, 5 s) (02 §3). */
export const CANDIDATE_WAIT_CAP_MS = 5000;

const TOP_KEYS = [
  'meshes',
  'clientServer',
  'fanout',
  'locationStore',
  'requestTimeoutMs',
  'handlerConcurrency',
  'sendQueueLimit',
  'drainTimeoutMs',
];

/** An integer 0..10000: the one weight rule, for options (`Configuration`), run time (`InvalidArgument`) and the wire. */
export function isValidWeight(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= WEIGHT_MIN && value <= WEIGHT_MAX;
}

export function validateWeight(field: string, value: unknown): number {
  if (value === undefined) return DEFAULT_WEIGHT;
  if (!isValidWeight(value)) {
    throw configurationError(
      field,
      `weight must be an integer ${WEIGHT_MIN}..${WEIGHT_MAX}, got ${String(value)}`,
    );
  }
  return value;
}

function positiveInt(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw configurationError(field, `must be a positive integer, got ${String(value)}`);
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkKeys(field: string, value: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw configurationError(`${field}.${key}`, `unknown option (expected one of: ${allowed.join(', ')})`);
    }
  }
}

function checkName(field: string, name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0')) {
    throw configurationError(field, 'a name must be a non-empty string without NUL');
  }
  return name;
}

const ENDPOINT = /^tcp:\/\/[^\s:/]+:\d{1,5}$|^tcp:\/\/\[[0-9a-fA-F:]+\]:\d{1,5}$|^(ipc|inproc):\/\/\S+$/;

function checkEndpoint(field: string, value: unknown): string {
  const tcpPort =
    typeof value === 'string' && value.startsWith('tcp://')
      ? Number(value.slice(value.lastIndexOf(':') + 1))
      : 1;
  if (typeof value !== 'string' || !ENDPOINT.test(value) || !(tcpPort >= 1 && tcpPort <= 65535)) {
    throw configurationError(
      field,
      `expected an endpoint like tcp://host:port (port 1..65535), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function normalizeListen(field: string, value: unknown): NormalizedListen {
  if (value === undefined) return { port: 0, bindHost: '0.0.0.0', advertiseHost: undefined };
  if (!isRecord(value))
    throw configurationError(field, 'must be an object { port, bindHost, advertiseHost }');
  checkKeys(field, value, ['port', 'bindHost', 'advertiseHost']);
  const port = value.port ?? 0;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw configurationError(`${field}.port`, `must be an integer 0..65535, got ${String(port)}`);
  }
  const bindHost = value.bindHost ?? '0.0.0.0';
  if (typeof bindHost !== 'string' || bindHost.length === 0)
    throw configurationError(`${field}.bindHost`, 'must be a host');
  const advertiseHost = value.advertiseHost;
  if (advertiseHost !== undefined && (typeof advertiseHost !== 'string' || advertiseHost.length === 0)) {
    throw configurationError(`${field}.advertiseHost`, 'must be a host');
  }
  return { port, bindHost, advertiseHost };
}

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

function normalizeClientServer(value: unknown): Map<string, NormalizedClientServerChannel> {
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
      if (!isRecord(entry.client)) throw configurationError(f, 'must be an object { connect? }');
      checkKeys(f, entry.client, ['connect']);
      const connect = entry.client.connect ?? [];
      if (!Array.isArray(connect)) throw configurationError(`${f}.connect`, 'must be an array of endpoints');
      slot.client = { connect: Object.freeze(connect.map((e, i) => checkEndpoint(`${f}.connect[${i}]`, e))) };
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

/** Every ChannelName must name exactly one send path (02 §4, 03 §2). Returns where each was declared. */
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
      for (const [channel, c] of Object.entries(channels)) {
        claim(channel, `meshes.${mesh}.channels.${channel}`);
        if (isRecord(c)) validateWeight(`meshes.${mesh}.channels.${channel}.weight`, c.weight);
      }
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
  const clientServer = normalizeClientServer(raw.clientServer);
  checkChannelNames(raw, clientServer);
  // Arrangements that later issues bring: refuse clearly rather than ignore a topology the user asked for.
  for (const later of ['meshes', 'fanout', 'locationStore'] as const) {
    if (raw[later] !== undefined)
      throw configurationError(later, 'is not supported by this version of nestjs-zlink yet');
  }
  // Without endpoints (and no local server to reach), a Client could only use automatic discovery,
  // which needs a Location Store (03 §3.3): fail now rather than let every call wait for nothing.
  for (const cs of clientServer.values()) {
    if (cs.client && cs.client.connect.length === 0 && !cs.server) {
      throw configurationError(
        `clientServer.${cs.channel}.client.connect`,
        'no server endpoint and no local Server role; automatic discovery needs a locationStore',
      );
    }
  }
  return Object.freeze({
    clientServer,
    requestTimeoutMs: positiveInt('requestTimeoutMs', raw.requestTimeoutMs, 30000),
    handlerConcurrency: positiveInt('handlerConcurrency', raw.handlerConcurrency, 1024),
    sendQueueLimit: positiveInt('sendQueueLimit', raw.sendQueueLimit, 10000),
    drainTimeoutMs: positiveInt('drainTimeoutMs', raw.drainTimeoutMs, 10000),
  });
}
