import type { MeshNodeState } from '../../core/wire/index.js';
import type { MeshSnapshot } from '../../core/observe/index.js';
import type { MeshCandidates } from './mesh-candidates.js';
import type { PeerTable } from './peer-table.js';

/** What `MeshNode.snapshot()` reads, at one moment. */
export interface MeshSnapshotSource {
  readonly own: MeshNodeState;
  readonly endpoint: string;
  /** Live accepted connections (outbound ones are counted on their links). */
  readonly accepted: number;
  readonly activeHandlers: number;
  readonly queued: number;
  readonly table: PeerTable;
  readonly candidates: MeshCandidates;
}

export function meshSnapshot(source: MeshSnapshotSource): MeshSnapshot {
  const { own, table, candidates } = source;
  let outbound = 0;
  for (const link of table.links.values()) if (link.connected) outbound++;
  return {
    mesh: own.mesh,
    rid: own.rid,
    generation: own.generation,
    endpoint: source.endpoint,
    sockets: 1,
    connections: source.accepted + outbound,
    links: [...table.links.values()].map((l) => ({
      endpoint: l.endpoint,
      status: l.status,
      ...(l.peerRid !== undefined && { peerRid: l.peerRid }),
    })),
    peers: [...table.peers.values()].map((p) => ({
      rid: p.rid,
      generation: p.state.generation,
      objectRole: p.state.objectRole,
      memberships: p.state.memberships,
      revision: p.state.revision,
      via: p.route.link ? ('outbound' as const) : ('inbound' as const),
      ...(p.state.topics && { topics: p.state.topics }),
    })),
    channels: [...candidates.channelNames()].map((channel) => {
      const membership = own.memberships.find((m) => m.channel === channel);
      const c = candidates.get(channel);
      return {
        channel,
        role: membership ? ('server' as const) : ('client' as const),
        ...(membership && { weight: membership.weight, draining: membership.draining }),
        candidates: c?.selector.size ?? 0,
        members: c?.members ?? 0,
      };
    }),
    revision: own.revision,
    activeHandlers: source.activeHandlers,
    queued: source.queued,
  };
}
