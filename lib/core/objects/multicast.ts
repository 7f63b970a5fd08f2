import { invalidArgument } from '../errors.js';
import type { ObjectKind } from '../kinds.js';
import { topicProblem } from './object-classes.js';

/**
 * Logical Multicast as object code sees it (docs/protocol.md#logical-multicast): a Spot subscribes to a
 * (channel, topic) with `@SpotSubscribe`; anyone on the object mesh publishes with `ctx.publish` or
 * `ZLinkSpotPublisher`. The shape of a publish call and of what a subscribed handler learns about the event;
 * which topics are the runtime's own is `topicProblem` (object-classes.ts), one rule for declaring and
 * publishing.
 */

/**
 * The topic a publish of `packet` on `channel` goes on: `options.topic`, else the packet name
 * (docs/protocol.md#logical-multicast). Throws `InvalidArgument` naming the
 * argument for a channel, packet or topic that cannot be published on, a reserved topic included:
 * the one check of both ways to publish, made when the call is built.
 */
export function publishTopic(channel: unknown, packet: unknown, options?: { topic?: unknown }): string {
  if (typeof channel !== 'string' || channel.length === 0)
    throw invalidArgument('channel', 'must be a non-empty string');
  if (typeof packet !== 'string' || packet.length === 0)
    throw invalidArgument('packet', 'must be a non-empty string');
  const topic = options?.topic ?? packet;
  const problem = topicProblem(topic);
  if (problem !== undefined) throw invalidArgument('topic', `'${String(topic)}' ${problem}`);
  return topic as string;
}

/** Options of a publish's `.async()`. */
export interface SpotPublishOptions {
  /** How long the publish may wait for the node's send queue to take it; defaults to `requestTimeoutMs`. */
  timeoutMs?: number;
  /** Aborting ends a publish still waiting for queue space with `Cancelled`. */
  signal?: AbortSignal;
}

/**
 * One Logical Multicast publish (`ctx.publish(...)`, `ZLinkSpotPublisher.publish(...)`): nothing
 * happens until `.async()`.
 */
export interface ZLinkSpotPublishCall {
  /**
   * Resolves once the event was handed over: queued for every other node whose Spots subscribe to the
   * (channel, topic), one record per node, and put into the queue of each subscribed Spot on this
   * node. Not a receipt: a node lost afterwards loses what was queued for it, and nothing is ever
   * sent again. Ends `InvalidArgument` (a bad or reserved topic, an event that cannot be encoded or is
   * larger than `multicastMaxEventBytes`), `Timeout` (the send queue stayed full past the deadline),
   * `Cancelled`, `Shutdown`, `NotConfigured` (no object mesh in this process) or `Unavailable` (the
   * runtime has not started).
   */
  async(options?: SpotPublishOptions): Promise<void>;
}

/** What a `@SpotSubscribe` handler learns about the event it runs for (`ctx.multicast`). */
export interface ZLinkMulticastEvent {
  readonly channel: string;
  /** The topic it was published on (the subscription's). `ctx.packet` is the event's packet name. */
  readonly topic: string;
  /** The NodeRid of the node that published it. */
  readonly publisherRid: string;
  /** The Spot or Actor that published it from a handler; `undefined` for `ZLinkSpotPublisher`. */
  readonly from: { readonly kind: ObjectKind; readonly id: string } | undefined;
}
