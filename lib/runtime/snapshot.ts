import type { JobQueue, NormalizedOptions, PendingRequests } from '../core/index.js';
import type { ClientChannel, ServerListener } from '../transport/index.js';

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
  readonly pendingRequests: number;
  readonly lateReplies: number;
  readonly activeHandlers: number;
}

export function buildSnapshot(
  options: NormalizedOptions,
  servers: ReadonlyMap<string, ServerListener>,
  clients: ReadonlyMap<string, ClientChannel>,
  pending: PendingRequests,
  jobs: JobQueue,
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
    pendingRequests: pending.size,
    lateReplies: pending.counters.late,
    activeHandlers: jobs.active,
  };
}
