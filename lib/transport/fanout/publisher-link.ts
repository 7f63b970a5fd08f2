import { Buffer } from 'node:buffer';
import type { Subscriber } from 'zeromq';
import {
  BEACON_TOPIC,
  type FanoutBeaconRecord,
  decodeFanoutBeacon,
  isBeaconTopic,
  readFanoutEvents,
} from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { FanoutHandlerRegistry, JobQueue, ZLinkFanoutContext } from '../../core/calls/index.js';
import type { SubscribedTopic } from '../../core/options/index.js';
import { InboundGate, type InboundMessage, type InboundScope } from '../inbound/index.js';
import { connectTo, hasFrames, subscriberSocket } from '../io/index.js';
import {
  type ChannelCurve,
  type HandshakeRefusal,
  reportConnectRefused,
  watchHandshakes,
} from '../security/index.js';
import { SubscribedTopics } from './topic-tables.js';

export interface PublisherLinkConfig {
  readonly channel: string;
  readonly endpoint: string;
  readonly topics: readonly SubscribedTopic[];
  readonly receiveHighWaterMark: number;
  readonly handlers: FanoutHandlerRegistry;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  /**
   * Whether events from the publisher run a beacon named may be delivered: any run of this channel
   * for a manual endpoint, only a listed (RID, generation) for a discovered one (docs/protocol.md#discovery).
   */
  readonly accepts: (beacon: FanoutBeaconRecord) => boolean;
  /** Discovered links deliver nothing before a beacon confirmed the publisher. */
  readonly needsConfirmation: boolean;
  /** CURVE: this link's SUB connects to `key` only. @default plain ZMTP */
  readonly curve?: ChannelCurve;
  readonly key?: string;
  /** A refused handshake: the store may list another key by now. */
  readonly rediscover?: () => void;
  /**
   * A refused handshake (the first of a streak): the publisher may hold another key (see `FanoutSubscriber`).
   */
  readonly onRefused?: (link: PublisherLink) => void;
}

/** What a link counted; `dropped` comes from gaps in the per-topic sequence numbers. */
export interface PublisherLinkCounters {
  received: number;
  dropped: number;
  /** zeromq matches subscriptions by prefix; a topic that is only a prefix match is not ours. */
  filtered: number;
  /** Events that arrived before the publisher was confirmed, or from the wrong channel. */
  unconfirmed: number;
}

/** A topic as handlers see it: the string or bytes the subscription was given as. */
type TopicForm = string | Buffer;

/** One event of a received frame, with the form of the topic it came on (its handler's `topic`). */
interface FanoutEvent extends InboundMessage {
  readonly metadata: undefined;
  readonly form: TopicForm;
}

/**
 * One SUB socket toward one publisher endpoint (docs/protocol.md#arrangements). It subscribes the beacon
 * topic and the channel's topics, delivers events whose topic matches exactly to the handler found by packet
 * name (none: discarded, reported `no_handler`), each under a job permit — a full job queue stops the
 * reading, zeromq's queues fill, and the publisher drops this subscriber's share, nobody else's. Beacons
 * never reach a handler nor the delivery events; they say the publisher is alive.
 */
export class PublisherLink {
  private readonly socket: Subscriber;
  private readonly topics: SubscribedTopics<TopicForm>;
  private readonly scope: InboundScope<ZLinkFanoutContext, FanoutEvent>;
  /** Runs events under job permits; a fanout link never refuses (no drain, no fence, no replies). */
  private readonly gate: InboundGate;
  private loop: Promise<void> | undefined;
  private frameTopic: Buffer = Buffer.alloc(0);
  private frameForm: TopicForm = '';
  readonly counters: PublisherLinkCounters = { received: 0, dropped: 0, filtered: 0, unconfirmed: 0 };
  /** The run the last beacon named. */
  beacon: FanoutBeaconRecord | undefined;
  private confirmed: boolean;
  lastHeard = 0;
  /** Since when the link waits for job permits, reading nothing (see `silentAt`). */
  private waitingSince: number | undefined;
  state: 'connecting' | 'alive' | 'silent' = 'connecting';
  /** A handshake was refused since the last one that succeeded (one report per such streak). */
  private refused = false;
  private watching: Promise<void> | undefined;

  constructor(private readonly config: PublisherLinkConfig) {
    this.confirmed = !config.needsConfirmation;
    this.socket = subscriberSocket(config.endpoint, config.receiveHighWaterMark, config.curve?.socket);
    this.topics = new SubscribedTopics(config.topics);
    const { channel, handlers, events } = config;
    this.scope = {
      route: 'fanout',
      events,
      channel,
      mesh: undefined,
      metrics: events.metrics.scope('fanout', channel, undefined).handlers,
      lookup: (_kind, packet) => handlers.lookup(channel, 'send', packet),
      context: (_kind, packet, _metadata, _correlation, _source, event) => ({
        channelName: channel,
        packet,
        topic: event.form,
        publisherRid: this.beacon?.rid,
      }),
      reply: () => undefined,
    };
    // backlog 0: once one event waits for a permit, the rest of the frame waits behind it (in order),
    // and the link reads nothing more until they all ran.
    this.gate = new InboundGate({ jobs: config.jobs, backlog: 0, recheck: false });
  }

  get endpoint(): string {
    return this.config.endpoint;
  }

  /** With CURVE, the publisher key this link's SUB connected to. */
  get key(): string | undefined {
    return this.config.key;
  }

  /** Whether it delivers nothing before a beacon named an accepted run. */
  get needsConfirmation(): boolean {
    return this.config.needsConfirmation;
  }

  start(): void {
    // The beacon last: the publisher answers that subscription with a beacon at once, and reads the
    // subscriptions in order — so the first beacon says every topic here is subscribed there.
    this.socket.subscribe(...this.config.topics.map((t) => t.bytes), BEACON_TOPIC);
    this.watching = watchHandshakes(this.socket, {
      handshake: () => void (this.refused = false),
      disconnect: () => undefined,
      refused: (reason, _address, code) => this.onRefused(reason, code),
    });
    connectTo(this.socket, this.config.key, () => this.socket.connect(this.config.endpoint));
    this.loop = this.receiveLoop();
  }

  /** The discovered list changed: a beacon already heard may name a listed run now. */
  recheck(): void {
    if (this.beacon && this.beacon.channel === this.config.channel)
      this.confirmed = this.config.accepts(this.beacon);
  }

  async close(): Promise<void> {
    if (!this.socket.closed) this.socket.close();
    await this.loop;
    await this.watching;
  }

  /** zeromq tries again by itself (backing off); the first refusal of each streak is reported. */
  private onRefused(reason: HandshakeRefusal, code: string): void {
    if (this.refused) return;
    this.refused = true;
    reportConnectRefused({ ...this.config, route: 'fanout' }, 'this subscriber', 'publisher', reason, code);
    this.config.rediscover?.();
    this.config.onRefused?.(this);
  }

  private async receiveLoop(): Promise<void> {
    for (;;) {
      let message: Buffer[];
      try {
        message = await this.socket.receive();
      } catch {
        return; // closed
      }
      const wasAlive = this.state === 'alive';
      this.lastHeard = Date.now();
      this.state = 'alive';
      let newRun = false;
      if (hasFrames(message, 2, this.protocolError)) {
        const [topic, body] = message as [Buffer, Buffer];
        if (isBeaconTopic(topic)) newRun = this.onBeacon(body);
        else this.onEvents(topic, body);
      }
      if (!wasAlive || newRun) this.announce('alive');
      if (this.gate.behind) await this.waitForPermits();
    }
  }

  /**
   * Whether the publisher has been silent for longer than `limitMs`. Silence counts only while the
   * link reads: what the publisher sent while the link waited for job permits is still unread.
   */
  silentAt(now: number, limitMs: number): boolean {
    return this.waitingSince === undefined && now - this.lastHeard > limitMs;
  }

  /** Reads nothing until the events of the last frame that waited for a permit have all run. */
  private async waitForPermits(): Promise<void> {
    const since = Date.now();
    this.waitingSince = since;
    try {
      await this.gate.caughtUp();
    } finally {
      const now = Date.now();
      this.lastHeard = Math.min(now, this.lastHeard + (now - since));
      this.waitingSince = undefined;
    }
  }

  private onEvents(topic: Buffer, body: Buffer): void {
    const form = this.topics.formOf(topic);
    if (form === undefined) {
      this.counters.filtered++;
      return;
    }
    if (!this.confirmed) {
      readFanoutEvents(body, this.discard, this.protocolError);
      return;
    }
    this.frameTopic = topic;
    this.frameForm = form;
    readFanoutEvents(body, this.onEvent, this.protocolError);
  }

  private readonly onEvent = (seq: number, packet: string, payload: Uint8Array): void => {
    this.count(this.topics.key, seq);
    const event: FanoutEvent = { packet, metadata: undefined, payload, form: this.frameForm };
    this.gate.deliver(this.scope, this.frameTopic, undefined, event, false);
  };

  private readonly discard = (): void => {
    this.counters.unconfirmed++;
  };

  /** A gap in a topic's sequence is what HWM dropped on the way; a step back is a new publisher run. */
  private count(key: string, seq: number): void {
    this.counters.received++;
    const lost = this.topics.gap(key, seq);
    if (lost > 0) this.dropped(lost);
  }

  private dropped(count: number): void {
    this.counters.dropped += count;
    this.config.events.emit({
      type: 'delivery',
      result: 'drop',
      route: 'fanout',
      channel: this.config.channel,
      kind: 'send',
      count,
      reason: `a gap of ${count} in the topic's sequence: dropped at the high-water mark`,
    });
  }

  /** Returns whether the beacon names another run than the last one did. */
  private onBeacon(body: Buffer): boolean {
    const beacon = decodeFanoutBeacon(body);
    if (typeof beacon === 'string') {
      this.protocolError(beacon);
      return false;
    }
    if (beacon.channel !== this.config.channel) {
      this.confirmed = false;
      this.protocolError(`publisher at ${this.config.endpoint} serves '${beacon.channel}'`);
      return false;
    }
    const newRun = this.beacon?.generation !== beacon.generation;
    // Another run: its sequence numbers start over.
    if (newRun) this.topics.newRun();
    this.beacon = beacon;
    this.confirmed = this.config.accepts(beacon);
    return newRun;
  }

  /** Called by the subscriber's liveness sweep. */
  silent(): void {
    this.state = 'silent';
    this.announce('silent');
  }

  private announce(state: 'alive' | 'silent'): void {
    this.config.events.emit({
      type: 'fanout_publisher',
      state,
      channel: this.config.channel,
      endpoint: this.config.endpoint,
      ...(this.beacon && { rid: this.beacon.rid, generation: this.beacon.generation }),
    });
  }

  private readonly protocolError = (reason: string): void => {
    this.config.events.emit({
      type: 'protocol_error',
      route: 'fanout',
      channel: this.config.channel,
      endpoint: this.config.endpoint,
      reason,
    });
  };
}
