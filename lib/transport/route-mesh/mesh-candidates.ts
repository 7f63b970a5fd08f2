import { type SelectorCandidate, TargetSelector } from '../../core/calls/index.js';
import type { Peer } from './peer-table.js';

/** Select-one state of one ChannelName on a MeshNode. */
export interface MeshChannelCandidates {
  readonly selector: TargetSelector<Peer>;
  /** Ready peers with a Server membership for the channel, selectable or not. */
  members: number;
}

/**
 * ChannelName select-one over a mesh (docs/protocol.md#select-one): the candidates of a channel are the
 * remote peers' Server memberships for it — never this node, which is no peer of its own — minus weight 0 and
 * draining, chosen by the smooth weighted round-robin with the NodeRid as identifier. The lists are rebuilt
 * only when a peer comes, goes or changes its memberships; a call reads them.
 */
export class MeshCandidates {
  private readonly channels = new Map<string, MeshChannelCandidates>();
  /** How many times the lists were rebuilt (a test proves calls never trigger one). */
  rebuilds = 0;

  constructor(channels: Iterable<string>) {
    for (const channel of channels)
      this.channels.set(channel, { selector: new TargetSelector<Peer>(), members: 0 });
  }

  channelNames(): IterableIterator<string> {
    return this.channels.keys();
  }

  get(channel: string): MeshChannelCandidates | undefined {
    return this.channels.get(channel);
  }

  rebuild(peers: Iterable<Peer>): void {
    this.rebuilds++;
    const lists = new Map<string, SelectorCandidate<Peer>[]>();
    const members = new Map<string, number>();
    for (const peer of peers) {
      for (const m of peer.state.memberships) {
        if (!this.channels.has(m.channel)) continue;
        members.set(m.channel, (members.get(m.channel) ?? 0) + 1);
        if (m.weight === 0 || m.draining) continue;
        let list = lists.get(m.channel);
        if (!list) lists.set(m.channel, (list = []));
        list.push({ id: peer.id, weight: m.weight, target: peer });
      }
    }
    for (const [channel, state] of this.channels) {
      state.members = members.get(channel) ?? 0;
      state.selector.update(lists.get(channel) ?? []);
    }
  }
}
