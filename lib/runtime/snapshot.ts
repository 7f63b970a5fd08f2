import type { JobQueue, MeshSnapshot, NormalizedOptions, PendingRequests } from '../core/index.js';
import type { ClientChannel, FanoutSubscriber, MeshNode, ServerListener } from '../transport/index.js';
import type { RuntimeFanout } from './fanout.js';
import type { LocationSnapshot, RuntimeLocation } from './location.js';

export type ChannelRole = 'client' | 'server' | 'client_and_server';

export interface ZLinkSnapshot {
  readonly channels: {
    readonly channel: string;
    readonly arrangement: 'client-server';
    /** `client_and_server` says both registrations are present; it is not a role of its own. */
    readonly role: ChannelRole;
    readonly server?: {
      readonly endpoint: string;
      readonly serverRid: string;
      readonly generation: string;
      readonly weight: number;
      readonly draining: boolean;
      readonly revision: number;
      readonly activeHandlers: number;
    };
    readonly client?: {
      readonly candidates: number;
      readonly connections: ReturnType<ClientChannel['snapshot']>;
    };
  }[];
  readonly meshes: MeshSnapshot[];
  /** Classic fanout channels: the publisher's endpoint and counts, each subscriber link's state and counts. */
  readonly fanout: {
    readonly channel: string;
    readonly publisher?: {
      readonly endpoint: string;
      readonly rid: string;
      readonly published: number;
      readonly queued: number;
      readonly waited: number;
    };
    readonly subscriber?: { readonly publishers: ReturnType<FanoutSubscriber['snapshot']> };
  }[];
  /** Present when a `locationStore` is configured and the runtime started. */
  readonly locationStore?: LocationSnapshot;
  readonly pendingRequests: number;
  readonly lateReplies: number;
  readonly activeHandlers: number;
}

export function buildSnapshot(
  options: NormalizedOptions,
  servers: ReadonlyMap<string, ServerListener>,
  clients: ReadonlyMap<string, ClientChannel>,
  meshes: ReadonlyMap<string, MeshNode>,
  pending: PendingRequests,
  jobs: JobQueue,
  location: RuntimeLocation | undefined,
  fanout: RuntimeFanout,
): ZLinkSnapshot {
  const channels = [...options.clientServer.values()].map((cs) => {
    const server = servers.get(cs.channel);
    const client = clients.get(cs.channel);
    const role: ChannelRole = cs.client && cs.server ? 'client_and_server' : cs.server ? 'server' : 'client';
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
  return {
    channels,
    meshes: [...meshes.values()].map((node) => node.snapshot()),
    fanout: [...options.fanout.keys()].map((channel) => {
      const p = fanout.publishers.get(channel);
      const s = fanout.subscribers.get(channel);
      return {
        channel,
        ...(p && {
          publisher: {
            endpoint: p.endpoint,
            rid: p.rid,
            published: p.published,
            queued: p.pump.queued,
            waited: p.waited,
          },
        }),
        ...(s && { subscriber: { publishers: s.snapshot() } }),
      };
    }),
    ...(location && { locationStore: location.snapshot() }),
    pendingRequests: pending.size,
    lateReplies: pending.counters.late,
    activeHandlers: jobs.active,
  };
}
