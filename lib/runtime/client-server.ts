import process from 'node:process';
import { hostname } from 'node:os';
import type { ZLinkEvents } from '../core/observe/index.js';
import type { ChannelHandlerRegistry, JobQueue, PendingRequests } from '../core/calls/index.js';
import type { LocationDescriptor, ServerDescriptor } from '../core/ports/index.js';
import type { NormalizedOptions } from '../core/options/index.js';
import { ClientChannel, type CurveKeyring, ServerListener } from '../transport/index.js';
import { bindListener } from './bind.js';
import type { RuntimeLocation } from './location.js';
import type { ChannelRole, ClientServerChannelSnapshot } from './snapshot.js';
import type { BindContext, Topology } from './topology.js';

export interface ClientServerConfig {
  readonly options: NormalizedOptions;
  readonly generation: string;
  /** Distinguishes default Server RIDs of this process; also its client id towards servers. */
  readonly processTag: string;
  readonly handlers: ChannelHandlerRegistry;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  readonly pending: PendingRequests;
  /** CURVE keys for the listeners and DEALERs (`security.curve`). @default plain ZMTP */
  readonly keyring?: CurveKeyring;
}

/**
 * The runtime's ClientServer channels: a Server listener and/or a Client per ChannelName
 * (docs/protocol.md#clientserver-roles).
 */
export class RuntimeClientServer implements Topology {
  private readonly servers = new Map<string, ServerListener>();
  private readonly clients = new Map<string, ClientChannel>();
  private location: RuntimeLocation | undefined;

  constructor(private readonly config: ClientServerConfig) {}

  /**
   * Binds every Server listener; a bind failure is `Configuration` naming the listen option. With a
   * Location Store, each descriptor follows its listener's state and admission follows the lease.
   */
  async bind({ stillStarting, location, tracing }: BindContext): Promise<void> {
    const { options, generation, processTag, handlers, jobs, events, keyring } = this.config;
    this.location = location;
    if (keyring) location?.observeLists(keyring);
    for (const [channel, cs] of options.clientServer) {
      if (!cs.server) continue;
      const listener: ServerListener = new ServerListener({
        channel,
        rid: cs.server.rid ?? `${hostname()}-${process.pid}-${processTag}`,
        generation,
        listen: cs.server.listen,
        weight: cs.server.weight,
        handlers,
        jobs,
        events,
        onStateChange: location && (() => location.update(this.descriptor(listener))),
        release: location && (() => location.release(this.descriptor(listener))),
        tracing,
        curve: keyring?.channel('client-server', channel, 'listener', cs.server.keys),
      });
      location?.onFence((fenced) => listener.setFenced(fenced));
      this.servers.set(channel, listener);
      await bindListener(() => listener.bind(), `clientServer.${channel}.server.listen`, stillStarting);
    }
  }

  descriptors(): LocationDescriptor[] {
    return [...this.servers.values()].map((s) => this.descriptor(s));
  }

  /** Opens every Client: towards the local Server (if any) and the manual endpoints. */
  connect(): void {
    const { options, processTag, pending, events, keyring } = this.config;
    const { location } = this;
    for (const [channel, cs] of options.clientServer) {
      if (!cs.client) continue;
      const client = new ClientChannel({
        channel,
        clientId: processTag,
        pending,
        events,
        sendQueueLimit: options.sendQueueLimit,
        vanishGraceMs: options.locationStore?.lease.ttlMs ?? 0,
        retireWaitMs: options.requestTimeoutMs,
        curve: keyring?.channel('client-server', channel, 'client'),
        rediscover:
          location && cs.client.discovery === 'auto' ? () => location.hint('server', channel) : undefined,
      });
      this.clients.set(channel, client);
      // The local server is a candidate like any other, reached over the real transport
      // (docs/protocol.md#the-local-server).
      const local = this.servers.get(channel);
      if (local)
        client.connect({
          endpoint: local.localEndpoint,
          rid: undefined,
          publicKey: this.serverKey(channel),
          publicKeys: keyring ? [this.serverKey(channel) as string] : [],
        });
      for (const entry of cs.client.connect) client.connect(entry);
    }
  }

  /** Server descriptors for every Client with `discovery: 'auto'`. */
  discover(location: RuntimeLocation): Promise<unknown>[] {
    const reads: Promise<unknown>[] = [];
    for (const [channel, cs] of this.config.options.clientServer) {
      const client = this.clients.get(channel);
      if (!client || cs.client?.discovery !== 'auto') continue;
      reads.push(
        location.discover('server', channel, (list) => client.setDiscovered(list as ServerDescriptor[])),
      );
    }
    return reads;
  }

  /** The Client role of `channel`, once connected. */
  client(channel: string): ClientChannel | undefined {
    return this.clients.get(channel);
  }

  /** The local Server's weight; false when this process does not serve `channel` here. */
  setWeight(channel: string, weight: number): boolean {
    const server = this.servers.get(channel);
    if (!server) return false;
    server.setWeight(weight);
    return true;
  }

  endpoint(channel: string): string | undefined {
    return this.servers.get(channel)?.endpoint;
  }

  localEndpoint(channel: string): string | undefined {
    return this.servers.get(channel)?.localEndpoint;
  }

  async drain(deadlineMs: number): Promise<void> {
    await Promise.all([...this.servers.values()].map((s) => s.drain(deadlineMs)));
  }

  /** Every configured ChannelName, with what its Server and Client show now. */
  snapshot(): ClientServerChannelSnapshot[] {
    return [...this.config.options.clientServer.values()].map((cs) => {
      const server = this.servers.get(cs.channel);
      const client = this.clients.get(cs.channel);
      const role: ChannelRole =
        cs.client && cs.server ? 'client_and_server' : cs.server ? 'server' : 'client';
      return {
        channel: cs.channel,
        arrangement: 'client-server' as const,
        role,
        ...(server && {
          server: { endpoint: server.endpoint, ...server.serverState, activeHandlers: server.activeHandlers },
        }),
        ...(client && { client: { candidates: client.candidateCount, connections: client.snapshot() } }),
      };
    });
  }

  /** Closes the Clients, then the Server listeners. */
  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
    await Promise.all([...this.servers.values()].map((s) => s.close()));
  }

  /**
   * What a Server listener publishes in the Location Store (docs/protocol.md#location-store): with CURVE, its
   * key too.
   */
  private descriptor(listener: ServerListener): ServerDescriptor {
    return serverDescriptor(listener, this.serverKey(listener.serverState.channel));
  }

  /** With CURVE, the public key the Server of `channel` holds: its own pair's, else the runtime's. */
  private serverKey(channel: string): string | undefined {
    const { keyring, options } = this.config;
    return keyring && (options.clientServer.get(channel)?.server?.keys ?? keyring.keys).publicKey;
  }
}

function serverDescriptor(listener: ServerListener, publicKey: string | undefined): ServerDescriptor {
  const s = listener.serverState;
  return {
    ...(publicKey !== undefined && { publicKey }),
    kind: 'server',
    channel: s.channel,
    rid: s.serverRid,
    generation: s.generation,
    endpoint: listener.endpoint,
    weight: s.weight,
    draining: s.draining,
    revision: s.revision,
  };
}
