import type { MulticastTopic } from '../../core/wire/index.js';
import type { MeshLink, ObjectPeer, PeerAddress } from '../../core/ports/index.js';

const NONE: readonly PeerAddress[] = Object.freeze([]);

/**
 * Which ready peers advertise each Logical Multicast (channel, topic): a publish reads its pair's
 * list (two map reads) and sends each node on it one record. Kept from the link's peer events, so a
 * peer's list changes in the receive turn that applied its new state, before anything after it on
 * that link is read. Lists are replaced, never changed in place: a publish holds a stable one.
 */
export class PeerTopics {
  private readonly byChannel = new Map<string, Map<string, readonly PeerAddress[]>>();
  /** Each peer's advertised pairs as last applied, to take it off them when they change. */
  private readonly ofPeer = new Map<string, { address: PeerAddress; topics: readonly MulticastTopic[] }>();
  private readonly off: () => void;

  constructor(link: MeshLink) {
    for (const peer of link.peers()) this.set(peer);
    this.off = link.onPeer((event) => {
      if (event.type === 'down') this.remove(event.peer.rid);
      else this.set(event.peer);
    });
  }

  /** The ready peers whose Spots subscribe to (`channel`, `topic`): empty when none. */
  nodes(channel: string, topic: string): readonly PeerAddress[] {
    return this.byChannel.get(channel)?.get(topic) ?? NONE;
  }

  close(): void {
    this.off();
  }

  private set(peer: ObjectPeer): void {
    this.remove(peer.rid);
    if (peer.topics.length === 0) return;
    const address: PeerAddress = { rid: peer.rid, generation: peer.generation };
    this.ofPeer.set(peer.rid, { address, topics: peer.topics });
    for (const { channel, topic } of peer.topics) {
      let byTopic = this.byChannel.get(channel);
      if (!byTopic) this.byChannel.set(channel, (byTopic = new Map()));
      byTopic.set(topic, [...(byTopic.get(topic) ?? NONE), address]);
    }
  }

  private remove(rid: string): void {
    const known = this.ofPeer.get(rid);
    if (!known) return;
    this.ofPeer.delete(rid);
    for (const { channel, topic } of known.topics) {
      const byTopic = this.byChannel.get(channel);
      const list = byTopic?.get(topic)?.filter((p) => p !== known.address);
      if (!byTopic || !list) continue;
      if (list.length > 0) byTopic.set(topic, list);
      else byTopic.delete(topic);
      if (byTopic.size === 0) this.byChannel.delete(channel);
    }
  }
}
