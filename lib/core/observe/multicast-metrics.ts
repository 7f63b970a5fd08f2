/**
 * Counters of one Logical Multicast (channel, topic) on this node (issue 31 item 5), kept where the
 * work happens. Labels are mesh, channel and topic — never a Spot id or a publisher.
 */
export class MulticastTopicMetrics {
  /** Publishes handed over here (queued for every participating node, put into local Spots' queues). */
  published = 0;
  /** Event records queued here for other nodes: one per participating node per publish. */
  records = 0;
  /** Event records that arrived here from other nodes. */
  received = 0;
  /** Events put into a subscribed Spot's queue here (one per Spot per event). */
  delivered = 0;
  /** Of those, turns whose handler returned. */
  handled = 0;
  /** Event records that arrived here while no Spot of this node subscribed to their topic. */
  dropped = 0;
  /** Event turns that ran no handler: the Spot had run that event already (a move brought it twice). */
  duplicates = 0;
  /** Events a subscribed Spot could not take, per code (a full queue is `Rejected`). */
  readonly refused = new Map<string, number>();
  /** Event turns whose handler threw, per code. */
  readonly failed = new Map<string, number>();
}

export interface MulticastMetricsSnapshot {
  readonly mesh: string;
  readonly channel: string;
  readonly topic: string;
  readonly published: number;
  readonly records: number;
  readonly received: number;
  readonly delivered: number;
  readonly handled: number;
  readonly dropped: number;
  readonly duplicates: number;
  readonly refused: Readonly<Record<string, number>>;
  readonly failed: Readonly<Record<string, number>>;
}

/** Adds one to `code`'s count in `counts`. */
export function countCode(counts: Map<string, number>, code: string): void {
  counts.set(code, (counts.get(code) ?? 0) + 1);
}

interface Entry {
  readonly mesh: string;
  readonly channel: string;
  readonly topic: string;
  readonly m: MulticastTopicMetrics;
}

/**
 * One `MulticastTopicMetrics` per (mesh, channel, topic), made on first ask. Channel then topic are
 * two map reads (no key string built per event); a node has one object mesh.
 */
export class MulticastMetricsRegistry {
  private readonly byMesh = new Map<string, Map<string, Map<string, Entry>>>();

  of(mesh: string, channel: string, topic: string): MulticastTopicMetrics {
    let channels = this.byMesh.get(mesh);
    if (!channels) this.byMesh.set(mesh, (channels = new Map()));
    let topics = channels.get(channel);
    if (!topics) channels.set(channel, (topics = new Map()));
    let entry = topics.get(topic);
    if (!entry) topics.set(topic, (entry = { mesh, channel, topic, m: new MulticastTopicMetrics() }));
    return entry.m;
  }

  snapshot(): MulticastMetricsSnapshot[] {
    const out: MulticastMetricsSnapshot[] = [];
    for (const channels of this.byMesh.values())
      for (const topics of channels.values())
        for (const { mesh, channel, topic, m } of topics.values())
          out.push({
            mesh,
            channel,
            topic,
            published: m.published,
            records: m.records,
            received: m.received,
            delivered: m.delivered,
            handled: m.handled,
            dropped: m.dropped,
            duplicates: m.duplicates,
            refused: Object.fromEntries(m.refused),
            failed: Object.fromEntries(m.failed),
          });
    return out;
  }
}
