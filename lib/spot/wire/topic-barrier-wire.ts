import { RecordKind, WIRE_VERSION, isCount, packr } from '../../core/wire/index.js';

/**
 * The round trip a moving subscribed Spot's two owners make with every peer (docs/decisions.md
 * "Logical Multicast across a move"): a node sends each peer a barrier, and each answers at once.
 * Links keep order both ways, so an answer proves two things: the peer had read everything the node
 * sent before the barrier (its new advertisement among it), and everything the peer sent the node
 * before answering (its events among it) has arrived.
 *
 *     TopicBarrier    [1, 74, barrierId, ...later]
 *     TopicBarrierAck [1, 75, barrierId, ...later]
 *
 * `barrierId` is the sender's own number for the round; an answer to another round is ignored.
 */
export interface TopicBarrierRecord {
  readonly kind: typeof RecordKind.TopicBarrier | typeof RecordKind.TopicBarrierAck;
  readonly barrierId: number;
}

export function encodeTopicBarrier(
  kind: typeof RecordKind.TopicBarrier | typeof RecordKind.TopicBarrierAck,
  barrierId: number,
): Uint8Array {
  return packr.pack([WIRE_VERSION, kind, barrierId]);
}

/** Reads 74 or 75 (the record array); the reason it is malformed otherwise. Later fields are ignored. */
export function decodeTopicBarrier(value: readonly unknown[]): TopicBarrierRecord | string {
  const [, kind, barrierId] = value;
  if ((kind !== RecordKind.TopicBarrier && kind !== RecordKind.TopicBarrierAck) || !isCount(barrierId))
    return 'malformed topic barrier record';
  return { kind, barrierId };
}
