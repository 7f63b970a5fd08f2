import { type EndpointOptions, type NormalizedEndpoint, normalizeEndpoints } from './endpoint-options.js';
import { configurationError } from '../errors.js';
import {
  type ListenerKeys,
  type ListenerSecurityOptions,
  normalizeListenerSecurity,
} from './security-options.js';
import {
  type ListenOptions,
  type NormalizedListen,
  checkKeys,
  checkName,
  isRecord,
  normalizeListen,
  validateWeight,
} from '../option-checks.js';

/** The `clientServer` option: a Client and/or a Server role per ChannelName (its shapes and their checks). */

export interface ClientServerClientOptions {
  /**
   * Manual server endpoints, `tcp://host:port`, or `{ endpoint, rid?, publicKey? }`: `rid` is the Server
   * RID expected there (another one is not selected); with `security.curve`, `publicKey` is the server's
   * key (required then: the connection is made to that key only).
   */
  connect?: EndpointOptions[];
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
  /**
   * Server identity; keep it stable across restarts of the same server. @default `<hostname>-<pid>-<random
   * per runtime>`
   */
  rid?: string;
  /**
   * This listener's own CURVE key pair instead of the runtime's (needs `security.curve`): its descriptor
   * carries that public key, and clients connect to it. @default the runtime's pair
   */
  security?: ListenerSecurityOptions;
}

export interface ClientServerChannelOptions {
  client?: ClientServerClientOptions;
  server?: ClientServerServerOptions;
}

/** The array form: one registration per entry; a Client and a Server entry for one channel merge. */
export interface ClientServerRegistration extends ClientServerChannelOptions {
  channel: string;
}

export interface NormalizedClientServerChannel {
  readonly channel: string;
  readonly client:
    { readonly connect: readonly NormalizedEndpoint[]; readonly discovery: 'manual' | 'auto' } | undefined;
  readonly server:
    | {
        readonly listen: NormalizedListen;
        readonly weight: number;
        readonly rid: string | undefined;
        /** Its own key pair (`security.curve`), when it has one. */
        readonly keys: ListenerKeys | undefined;
      }
    | undefined;
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

export function normalizeClientServer(
  value: unknown,
  hasStore: boolean,
  curve: boolean,
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
      const discovery = entry.client.discovery ?? 'manual';
      if (discovery !== 'manual' && discovery !== 'auto')
        throw configurationError(`${f}.discovery`, `must be 'manual' or 'auto', got ${String(discovery)}`);
      // Automatic discovery without a store fails before any listener binds
      // (docs/protocol.md#location-store).
      if (discovery === 'auto' && !hasStore)
        throw configurationError(`${f}.discovery`, "'auto' needs a locationStore");
      slot.client = {
        connect: Object.freeze(
          normalizeEndpoints(`${f}.connect`, entry.client.connect ?? [], {
            what: 'server',
            curve,
            repeats: 'once',
            ridWithCurve: false,
            checkRid: checkName,
          }),
        ),
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
      checkKeys(f, entry.server, ['listen', 'weight', 'rid', 'security']);
      const rid = entry.server.rid === undefined ? undefined : checkName(`${f}.rid`, entry.server.rid);
      slot.server = {
        listen: normalizeListen(`${f}.listen`, entry.server.listen),
        weight: validateWeight(`${f}.weight`, entry.server.weight),
        rid,
        keys: normalizeListenerSecurity(`${f}.security`, entry.server.security, curve),
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
