import type { XPublisher } from 'zeromq';
import { BEACON_TOPIC, isBeaconTopic, encodeFanoutBeacon, encodeFanoutEvent } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { NormalizedListen } from '../../core/options/index.js';
import { ListenAddress, SocketPump, nextMessage, publisherSocket } from '../io/index.js';
import { type ChannelCurve, acceptedRefusals, watchHandshakes } from '../security/index.js';
import { NODROP_RETRY_MAX_MS } from '../timing.js';
import { TopicSequences } from './topic-tables.js';

export interface FanoutPublisherConfig {
  readonly channel: string;
  readonly rid: string;
  readonly generation: string;
  readonly listen: NormalizedListen;
  readonly noDrop: boolean;
  readonly sendHighWaterMark: number;
  readonly beaconIntervalMs: number;
  readonly sendQueueLimit: number;
  readonly events: ZLinkEvents;
  /** CURVE: the XPUB is a CURVE server and admits the keys its ZAP check knows. @default plain ZMTP */
  readonly curve?: ChannelCurve;
}

/**
 * The publisher of one classic fanout channel (docs/protocol.md#classic-fanout): one PUB listener. A publish
 * is done when the source-local queue took the event (docs/protocol.md#when-a-call-is-finished); events
 * queued together leave as one zeromq message per topic. In drop mode zeromq discards a subscriber's share
 * once its queue holds `sendHighWaterMark` messages and the publisher never waits; with `noDrop` the write
 * waits instead, the local queue fills, and publishes wait for space until their deadline.
 *
 * Every event carries a sequence number per topic, so subscribers can count what was dropped on the
 * way; a beacon on the reserved topic tells them the publisher is alive.
 */
export class FanoutPublisher {
  private readonly socket: XPublisher;
  private readonly address: ListenAddress;
  private loop: Promise<void> | undefined;
  readonly pump: SocketPump;
  private readonly seqs = new TopicSequences();
  private readonly beacon: Uint8Array;
  private beaconTimer: NodeJS.Timeout | undefined;
  /** With CURVE: stops answering ZAP for this publisher, and its connection-event watch. */
  private unzap: (() => Promise<void>) | undefined;
  private watching: Promise<void> | undefined;
  /** Events admitted (the publisher's own count; what subscribers received they count themselves). */
  published = 0;
  /**
   * Publishes that found the local queue full and waited for space: with `noDrop`, a slow subscriber's
   * backpressure; in drop mode only a burst larger than `sendQueueLimit` (a subscriber never makes it wait).
   */
  waited = 0;

  constructor(private readonly config: FanoutPublisherConfig) {
    // An XPUB, to see each subscriber's subscriptions: its beacon subscription is answered with a
    // beacon at once, so a new subscriber confirms who publishes without waiting for the interval.
    this.socket = publisherSocket({
      noDrop: config.noDrop,
      sendHighWaterMark: config.sendHighWaterMark,
      ipv6: config.listen.bindHost.includes(':'),
      curve: config.curve?.socket,
    });
    this.address = new ListenAddress(config.listen);
    // zeromq refuses an XPUB write at a full subscriber queue under noDrop (EAGAIN) and has no
    // writable signal for it (an XPUB always polls writable): the write is retried until it goes.
    const socket = config.noDrop ? { send: (m: Buffer[]) => this.sendWhenRoom(m) } : this.socket;
    this.pump = new SocketPump(socket, config.sendQueueLimit, `fanout publisher ${config.channel}`);
    this.beacon = encodeFanoutBeacon(config.channel, config.rid, config.generation);
  }

  get channel(): string {
    return this.config.channel;
  }

  get rid(): string {
    return this.config.rid;
  }

  get generation(): string {
    return this.config.generation;
  }

  get endpoint(): string {
    return this.address.endpoint;
  }

  get localEndpoint(): string {
    return this.address.local;
  }

  async bind(): Promise<void> {
    const { curve } = this.config;
    if (curve !== undefined) {
      // Before the bind: libzmq refuses every connection while no ZAP handler answers for the domain.
      this.unzap = await curve.serve();
      this.watching = watchHandshakes(this.socket, acceptedRefusals(curve, 'this publisher', 'a subscriber'));
    }
    await this.address.bind(this.socket);
    this.loop = this.subscriptions();
    this.beaconTimer = setInterval(this.sendBeacon, this.config.beaconIntervalMs);
    this.config.events.emit({ type: 'listening', channel: this.config.channel, endpoint: this.endpoint });
  }

  /**
   * Queues one event under `topic` (`key` names the topic in the counter table); `false` when the
   * local queue is full (the caller waits for space, see `admitThen`).
   */
  offer(topic: Buffer, key: string, packet: string, payload: Uint8Array): boolean {
    if (!this.pump.hasSpace) return false;
    this.published++;
    return this.pump.offer(encodeFanoutEvent(this.seqs.next(key), packet, payload), topic);
  }

  async close(): Promise<void> {
    if (this.beaconTimer) clearInterval(this.beaconTimer);
    this.pump.close();
    if (!this.socket.closed) this.socket.close();
    await this.loop;
    await this.watching;
    await this.unzap?.();
  }

  private async sendWhenRoom(message: Buffer[]): Promise<void> {
    let wait = 1;
    for (;;) {
      try {
        return await this.socket.send(message);
      } catch (error) {
        // Nothing of the message left (zeromq checks every subscriber's queue before the first frame).
        if ((error as { code?: string }).code !== 'EAGAIN' || this.socket.closed) throw error;
      }
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, NODROP_RETRY_MAX_MS);
    }
  }

  /** Subscription messages: `01` + topic. A beacon subscription gets a beacon right away. */
  private async subscriptions(): Promise<void> {
    for (;;) {
      const message = await nextMessage(this.socket, 1, () => undefined);
      if (!message) return; // closed
      const sub = message[0] as Buffer;
      if (sub[0] === 1 && isBeaconTopic(sub.subarray(1))) this.sendBeacon();
    }
  }

  /** Forced past the queue bound: liveness must not wait behind a full queue of events. */
  private readonly sendBeacon = (): void => {
    this.pump.force(this.beacon, BEACON_TOPIC);
  };
}
