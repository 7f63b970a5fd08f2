import { ZLinkError, cancelledError, errorMessage, invalidArgument } from '../../core/errors.js';
import { RecordKind, encodePayload } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { MeshLink, NodeRun, PeerAddress } from '../../core/ports/index.js';
import {
  type SpotPublishOptions,
  type ZLinkSpotPublishCall,
  publishTopic,
} from '../../core/objects/index.js';
import type { Activation, ObjectHost, ObjectPublisher } from '../owner/index.js';
import type { Clock } from '../resolve/index.js';
import {
  type SpotEventRecord,
  type SpotEventSource,
  type TopicBarrierRecord,
  encodeSpotEvent,
} from '../wire/index.js';
import {
  type DeliveryDeps,
  type LocalEvent,
  deliverEvent,
  multicastInfo,
  runHeldEvent,
} from './event-delivery.js';
import { TopicBarriers } from './topic-barriers.js';
import { TOPIC_BARRIER_MS } from '../timing/index.js';
import type { LocalTopics } from './local-topics.js';
import { PeerTopics } from './peer-topics.js';

/**
 * What a move of a subscribed Spot does through Logical Multicast (docs/decisions.md "Logical
 * Multicast across a move"): the target advertises the arriving Spot and waits until every peer has
 * read that; the source, before its go, waits until everything every peer published before is here.
 */
export interface MoveMulticast {
  /**
   * Target: Spot `a` is restored here: its topics are advertised from now on and its events wait for
   * it; resolves once every peer has read that advertisement (or `TOPIC_BARRIER_MS`). Never rejects.
   */
  arrive(a: Activation): Promise<void>;
  /** Target: `a` opened here, after the calls the move carried: the events that waited run, in order. */
  opened(a: Activation): void;
  /** Target: the move was given up before `a` opened here: its subscriptions and waiting events go. */
  abandoned(a: Activation): void;
  /**
   * Source, before its go: resolves once every peer answered a barrier sent now — whatever each had
   * published before it learned of the target is held here by then (or `TOPIC_BARRIER_MS`);
   * `undefined` for a Spot without subscriptions (its go need not wait).
   */
  flush(a: Activation): Promise<void> | undefined;
}

export interface MulticastDeps {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly link: MeshLink;
  readonly events: ZLinkEvents;
  /** The largest event a publish takes, encoded (`multicastMaxEventBytes`). */
  readonly maxEventBytes: number;
  /** How many events may wait for one Spot arriving by a move (`objectQueueLimit`). */
  readonly queueLimit: number;
  /** A publish's deadline when its `.async()` names none (the runtime's `requestTimeoutMs`). */
  readonly defaultTimeoutMs: number;
  readonly clock: Clock;
}

/** One publish as its `.async()` hands it over, its arguments checked (`publishTopic`). */
export interface SpotPublish {
  readonly channel: string;
  readonly topic: string;
  readonly packet: string;
  readonly event: unknown;
  readonly from: SpotEventSource | undefined;
  readonly options: SpotPublishOptions | undefined;
}

/**
 * Logical Multicast on one object mesh (docs/protocol.md#logical-multicast): a publish sends one
 * record to each node whose Spots subscribe to its (channel, topic) — as the nodes advertise it in
 * their mesh state, read from `PeerTopics`, no store read — and puts the event into the queue of each
 * subscribed Spot of this node; a node that receives the record puts it into its own subscribed
 * Spots' queues. No storage, no acknowledgement, and nothing is ever sent twice.
 */
export class SpotMulticast implements MoveMulticast, ObjectPublisher {
  /** This run's events, numbered in the order they were handed over: each receiver keeps that order. */
  private seq = 0;
  private readonly peers: PeerTopics;
  /** What delivering to this node's Spots needs; `undefined` on an object client (no Spots here). */
  private delivery: DeliveryDeps | undefined;
  private readonly barriers: TopicBarriers;
  private readonly offPeer: () => void;
  private closed = false;

  constructor(private readonly deps: MulticastDeps) {
    this.peers = new PeerTopics(deps.link);
    this.barriers = new TopicBarriers(deps.link);
    this.offPeer = deps.link.onPeer((e) => e.type === 'down' && this.barriers.gone(e.peer.rid));
  }

  /**
   * On an object server, once its host is built (the host publishes through this multicast, so it
   * comes second): events reach the Spots `local` lists, which live on `host`.
   */
  serve(local: LocalTopics, host: ObjectHost): void {
    // One host per node: a second would leave the first host's Spots subscribed to nothing.
    if (this.delivery) throw new Error('SpotMulticast.serve: already serving a host');
    const { mesh, self, events, queueLimit } = this.deps;
    this.delivery = { mesh, self, events, host, local, queueLimit };
  }

  /**
   * `ctx.publish` of object `from`: a publish of `event` as `packet` on (`channel`, `topic`, default
   * `packet`). Throws `InvalidArgument` at once as `publishTopic` does; the rest is `.async()`.
   */
  call(
    ...[from, channel, packet, event, options]: Parameters<ObjectPublisher['call']>
  ): ZLinkSpotPublishCall {
    const topic = publishTopic(channel, packet, options);
    return { async: (o) => this.publish({ channel, topic, packet, event, from, options: o }) };
  }

  /** Hands one event over (see `ZLinkSpotPublishCall.async`): one terminal, never a resend. */
  async publish(p: SpotPublish): Promise<void> {
    const { deps } = this;
    // Built only for the error that needs it (not on every publish).
    const what = (): string => `publish '${p.channel}' topic '${p.topic}'`;
    let payload: Uint8Array;
    try {
      payload = encodePayload(p.event);
    } catch (error) {
      throw invalidArgument(`${what()}: event`, `cannot be encoded: ${errorMessage(error)}`);
    }
    if (payload.length > deps.maxEventBytes)
      throw invalidArgument(
        `${what()}: event`,
        `is ${payload.length} bytes encoded, more than multicastMaxEventBytes ${deps.maxEventBytes}`,
      );
    const metrics = deps.events.metrics.multicast.of(deps.mesh, p.channel, p.topic);
    const signal = p.options?.signal;
    const deadline = deps.clock.now() + (p.options?.timeoutMs ?? deps.defaultTimeoutMs);
    for (;;) {
      if (this.closed) throw new ZLinkError('Shutdown', `${what()}: the runtime is shutting down`);
      if (signal?.aborted) throw cancelledError(what(), signal);
      // Read in the turn that queues: a node whose advertisement arrived meanwhile is on it.
      const nodes = this.peers.nodes(p.channel, p.topic);
      const seq = this.seq + 1;
      if (nodes.length > 0) {
        const record = encodeSpotEvent(p.channel, p.topic, p.packet, seq, p.from, payload);
        const queued = deps.link.sendToEach(nodes, record);
        if (queued === false) {
          await deps.link.waitForSpace(Math.max(1, deadline - deps.clock.now()), signal);
          continue;
        }
        metrics.records += queued;
      }
      this.seq = seq;
      metrics.published++;
      const spots = this.subscribers(p.channel, p.topic);
      if (spots) {
        const info = multicastInfo(p.channel, p.topic, deps.self.rid, p.from);
        const stamp = { info, publisherGeneration: deps.self.nodeGeneration, seq };
        this.deliver(spots, { packet: p.packet, payload, stamp, metrics });
      }
      return;
    }
  }

  /** An event record from peer `from`: into each subscribed Spot's queue here, or dropped and counted. */
  receive(r: SpotEventRecord, from: PeerAddress): void {
    const { deps } = this;
    const metrics = deps.events.metrics.multicast.of(deps.mesh, r.channel, r.topic);
    metrics.received++;
    const spots = this.subscribers(r.channel, r.topic);
    if (spots) {
      const info = multicastInfo(r.channel, r.topic, from.rid, r.from);
      const stamp = { info, publisherGeneration: from.generation, seq: r.seq };
      return this.deliver(spots, { packet: r.packet, payload: r.payload, stamp, metrics });
    }
    metrics.dropped++;
    deps.events.emit({
      type: 'multicast',
      result: 'dropped',
      mesh: deps.mesh,
      channel: r.channel,
      topic: r.topic,
      packet: r.packet,
      publisherRid: from.rid,
      reason: 'no Spot on this node subscribes to its topic',
    });
  }

  /** A peer's topic barrier (answered at once) or its answer to one of this node's. */
  barrier(r: TopicBarrierRecord, from: PeerAddress): void {
    if (r.kind === RecordKind.TopicBarrier) this.barriers.asked(from.rid, r.barrierId);
    else this.barriers.answered(from.rid, r.barrierId);
  }

  arrive(a: Activation): Promise<void> {
    if (a.subscriptions === undefined || !this.delivery) return Promise.resolve();
    this.delivery.local.arrive(a);
    return this.barriers.round(TOPIC_BARRIER_MS);
  }

  opened(a: Activation): void {
    const { delivery } = this;
    if (a.subscriptions === undefined || !delivery) return;
    for (const event of delivery.local.opened(a)) runHeldEvent(delivery, a, event);
  }

  abandoned(a: Activation): void {
    this.delivery?.local.abandoned(a);
  }

  flush(a: Activation): Promise<void> | undefined {
    return a.subscriptions === undefined ? undefined : this.barriers.round(TOPIC_BARRIER_MS);
  }

  close(): void {
    this.closed = true;
    this.offPeer();
    this.barriers.close();
    this.peers.close();
  }

  /** The Spots of this node subscribed to (`channel`, `topic`); `undefined` when none (or on a client). */
  private subscribers(channel: string, topic: string): ReadonlySet<Activation> | undefined {
    const spots = this.delivery?.local.subscribers(channel, topic);
    return spots && spots.size > 0 ? spots : undefined;
  }

  /** Into the queue of each of `spots` (see `deliverEvent`). */
  private deliver(spots: ReadonlySet<Activation>, event: LocalEvent): void {
    const delivery = this.delivery as DeliveryDeps;
    for (const a of spots) deliverEvent(delivery, a, event);
  }
}
