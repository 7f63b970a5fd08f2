import type { ObjectKind } from '../../core/kinds.js';
import {
  RecordKind,
  WIRE_VERSION,
  isBytes,
  isCount,
  isName,
  isObjectKind,
  packr,
} from '../../core/wire/index.js';

/**
 * One Logical Multicast event from its publishing node to one node whose Spots subscribe to its
 * (channel, topic) — one record per node, however many Spots there take it (docs/decisions.md
 * "Logical Multicast"):
 *
 *     SpotEvent [1, 73, channel, topic, packet, seq, from | nil, payload, ...later]
 *
 *     from = [kind, id]   the Spot or Actor whose handler published it; nil from outside any object
 *
 * The publisher is the node it came from (the mesh link names it; a record never claims another
 * node's events). `seq` numbers the publishing run's events in the order they were handed over, so a
 * receiver can keep each publisher's order. `payload` is the event as msgpack, encoded once.
 *
 * A move carries an event that was waiting for its Spot, or arrived while it was sealed, to the new
 * owner in the same record with three more items — `publisherRid, publisherGeneration, spotId` — read
 * only inside a move (its image, its relays): a record straight from a peer never names its publisher.
 */
export interface SpotEventRecord {
  readonly kind: typeof RecordKind.SpotEvent;
  readonly channel: string;
  readonly topic: string;
  readonly packet: string;
  readonly seq: number;
  readonly from: SpotEventSource | undefined;
  readonly payload: Uint8Array;
  /** On a record a move carried: who published it, and the Spot it waited for. */
  readonly carried?: CarriedEvent;
}

export interface CarriedEvent {
  readonly publisherRid: string;
  readonly publisherGeneration: string;
  readonly spotId: string;
}

/** The object that published an event from one of its handlers. */
export interface SpotEventSource {
  readonly kind: ObjectKind;
  readonly id: string;
}

export function encodeSpotEvent(
  channel: string,
  topic: string,
  packet: string,
  seq: number,
  from: SpotEventSource | undefined,
  payload: Uint8Array,
  carried?: CarriedEvent,
): Uint8Array {
  const record: unknown[] = [
    WIRE_VERSION,
    RecordKind.SpotEvent,
    channel,
    topic,
    packet,
    seq,
    from === undefined ? null : [from.kind, from.id],
    payload,
  ];
  if (carried) record.push(carried.publisherRid, carried.publisherGeneration, carried.spotId);
  return packr.pack(record);
}

/** Reads 73 (the record array); the reason it is malformed otherwise. Later fields are ignored. */
export function decodeSpotEvent(v: readonly unknown[]): SpotEventRecord | string {
  const [, , channel, topic, packet, seq, from, payload] = v;
  if (
    v.length < 8 ||
    !isName(channel) ||
    !isName(topic) ||
    !isName(packet) ||
    !isCount(seq) ||
    !isBytes(payload)
  )
    return 'malformed spot event record';
  let source: SpotEventSource | undefined;
  if (from !== null) {
    if (!Array.isArray(from) || !isObjectKind(from[0]) || !isName(from[1]))
      return 'malformed spot event record: its publisher';
    source = { kind: from[0], id: from[1] };
  }
  const [publisherRid, publisherGeneration, spotId] = v.slice(8);
  const carried =
    isName(publisherRid) && isName(publisherGeneration) && isName(spotId)
      ? { publisherRid, publisherGeneration, spotId }
      : undefined;
  return {
    kind: RecordKind.SpotEvent,
    channel,
    topic,
    packet,
    seq,
    from: source,
    payload,
    ...(carried && { carried }),
  };
}
