import { Buffer } from 'node:buffer';
import process from 'node:process';
import { hostname } from 'node:os';
import { ZLinkError, configurationError, invalidArgument } from '../core/errors.js';
import { encodePayload } from '../core/wire/index.js';
import type { ZLinkEvents } from '../core/observe/index.js';
import { type FanoutHandlerRegistry, type JobQueue, RESOLVED } from '../core/calls/index.js';
import type { LocationDescriptor, PublisherDescriptor } from '../core/ports/index.js';
import { type NormalizedOptions, topicBytes } from '../core/options/index.js';
import { type CurveKeyring, FanoutPublisher, FanoutSubscriber, admitThen } from '../transport/index.js';
import { bindListener } from './bind.js';
import type { PublishCall } from './fanout-client.js';
import type { RuntimeLocation } from './location.js';
import type { FanoutChannelSnapshot } from './snapshot.js';
import type { BindContext, Topology } from './topology.js';

export interface FanoutConfig {
  readonly options: NormalizedOptions;
  readonly generation: string;
  readonly processTag: string;
  readonly handlers: FanoutHandlerRegistry;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  /** CURVE keys for the publishers and subscribers (`security.curve`). @default plain ZMTP */
  readonly keyring?: CurveKeyring;
}

/** A publish with its deadline resolved. */
export type PublishSubmission = PublishCall & { readonly timeoutMs: number };

/** Topic bytes of string topics, made once per name (publishers repeat a few topics). */
const TOPIC_CACHE_LIMIT = 1024;

/** The runtime's classic fanout channels: a publisher and/or a subscriber per ChannelName. */
export class RuntimeFanout implements Topology {
  readonly publishers = new Map<string, FanoutPublisher>();
  readonly subscribers = new Map<string, FanoutSubscriber>();
  private readonly topics = new Map<string, [Buffer, string]>();
  private location: RuntimeLocation | undefined;

  constructor(private readonly config: FanoutConfig) {}

  /** Binds every publisher; a bind failure is `Configuration` naming the listen option. */
  async bind({ stillStarting, location }: BindContext): Promise<void> {
    const { options, generation, processTag, events, keyring } = this.config;
    this.location = location;
    if (keyring) location?.observeLists(keyring);
    for (const [channel, f] of options.fanout) {
      if (!f.publisher) continue;
      const publisher = new FanoutPublisher({
        channel,
        rid: f.publisher.rid ?? `${hostname()}-${process.pid}-${processTag}-${channel}`,
        generation,
        listen: f.publisher.listen,
        noDrop: f.publisher.noDrop,
        sendHighWaterMark: f.publisher.sendHighWaterMark,
        beaconIntervalMs: f.publisher.beaconIntervalMs,
        sendQueueLimit: options.sendQueueLimit,
        events,
        curve: keyring?.channel('fanout', channel, 'publisher', f.publisher.keys),
      });
      this.publishers.set(channel, publisher);
      await bindListener(() => publisher.bind(), `fanout.${channel}.publisher.listen`, stillStarting);
    }
  }

  /**
   * Opens every subscriber and connects its manual endpoints. `Configuration` for a subscriber with
   * nothing to subscribe to.
   */
  connect(): void {
    const { options, handlers, jobs, events, keyring } = this.config;
    const { location } = this;
    for (const [channel, f] of options.fanout) {
      const s = f.subscriber;
      if (!s) continue;
      const topics = s.topics ?? handlers.packets(channel).map((p) => ({ bytes: Buffer.from(p), form: p }));
      if (topics.length === 0)
        throw configurationError(
          `fanout.${channel}.subscriber.topics`,
          'nothing to subscribe: give topics, or register a @FanoutHandler (its packet name is the default topic)',
        );
      const subscriber = new FanoutSubscriber({
        channel,
        topics,
        receiveHighWaterMark: s.receiveHighWaterMark,
        silenceTimeoutMs: s.silenceTimeoutMs,
        vanishGraceMs: options.locationStore?.lease.ttlMs ?? 0,
        handlers,
        jobs,
        events,
        curve: keyring?.channel('fanout', channel, 'subscriber'),
        rediscover:
          location && s.discovery === 'auto' ? () => location.hint('publisher', channel) : undefined,
      });
      this.subscribers.set(channel, subscriber);
      for (const entry of s.connect) subscriber.connect(entry);
    }
  }

  /** Publisher descriptors for every subscriber with `discovery: 'auto'`. */
  discover(location: RuntimeLocation): Promise<unknown>[] {
    const reads: Promise<unknown>[] = [];
    for (const [channel, f] of this.config.options.fanout) {
      const subscriber = this.subscribers.get(channel);
      if (!subscriber || f.subscriber?.discovery !== 'auto') continue;
      reads.push(
        location.discover('publisher', channel, (list) =>
          subscriber.setDiscovered(list as PublisherDescriptor[]),
        ),
      );
    }
    return reads;
  }

  descriptors(): LocationDescriptor[] {
    return [...this.publishers.values()].map((p) => ({
      kind: 'publisher',
      channel: p.channel,
      rid: p.rid,
      generation: p.generation,
      endpoint: p.endpoint,
      revision: 1,
      ...(this.config.keyring && {
        publicKey: (this.config.options.fanout.get(p.channel)?.publisher?.keys ?? this.config.keyring.keys)
          .publicKey,
      }),
    }));
  }

  /**
   * Publishes one event (docs/protocol.md#classic-fanout, docs/protocol.md#when-a-call-is-finished): done
   * when the local queue took it. Drop mode never waits on a subscriber; with `noDrop` a full queue waits for
   * space until the deadline (`Timeout`).
   */
  publish(call: PublishSubmission): Promise<void> {
    const publisher = this.publishers.get(call.channel);
    if (!publisher) {
      if (this.config.options.fanout.has(call.channel))
        throw new ZLinkError(
          'NotConfigured',
          `fanout channel '${call.channel}' has no publisher in this process`,
        );
      throw new ZLinkError('NotFound', `fanout channel '${call.channel}' is not registered in this process`);
    }
    const [topic, key] = this.topicOf(call.topic ?? call.packet);
    let payload: Uint8Array;
    try {
      payload = encodePayload(call.event);
    } catch (error) {
      throw invalidArgument(
        `publish ${call.channel}/${call.packet}`,
        `event cannot be encoded: ${(error as Error).message}`,
      );
    }
    if (!call.signal?.aborted) {
      if (publisher.offer(topic, key, call.packet, payload)) return RESOLVED;
      publisher.waited++;
    }
    const deadline = Date.now() + call.timeoutMs;
    const submission = {
      packet: call.packet,
      metadata: undefined,
      payload,
      trace: undefined,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    };
    const describe = `publish on '${call.channel}'`;
    return admitThen(
      publisher.pump,
      submission,
      deadline,
      describe,
      () => undefined,
      () => {
        publisher.offer(topic, key, call.packet, payload);
      },
    );
  }

  /**
   * The topic's bytes and its key in the publisher's sequence table; `InvalidArgument` for a reserved or
   * empty one.
   */
  private topicOf(topic: string | Uint8Array): [Buffer, string] {
    // The key is the wire bytes, so a string topic and the same bytes given raw count as one topic.
    if (typeof topic !== 'string') {
      const bytes = this.checked(topic);
      return [bytes, bytes.toString('latin1')];
    }
    let entry = this.topics.get(topic);
    if (entry === undefined) {
      const bytes = this.checked(topic);
      entry = [bytes, bytes.toString('latin1')];
      if (this.topics.size >= TOPIC_CACHE_LIMIT) this.topics.clear();
      this.topics.set(topic, entry);
    }
    return entry;
  }

  private checked(topic: unknown): Buffer {
    const bytes = topicBytes(topic);
    if (typeof bytes === 'string') throw invalidArgument('topic', bytes);
    return bytes;
  }

  /** Every configured fanout ChannelName, with what its publisher and subscriber show now. */
  snapshot(): FanoutChannelSnapshot[] {
    return [...this.config.options.fanout.keys()].map((channel) => {
      const p = this.publishers.get(channel);
      const s = this.subscribers.get(channel);
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
    });
  }

  /**
   * A publisher has nothing to drain: publishing is done on local admission
   * (docs/protocol.md#when-a-call-is-finished).
   */
  drain(): Promise<void> {
    return RESOLVED;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscribers.values()].map((s) => s.close()));
    await Promise.all([...this.publishers.values()].map((p) => p.close()));
  }
}
