import type { ZLinkEvents } from '../../core/observe/index.js';
import type { FanoutHandlerRegistry, JobQueue } from '../../core/calls/index.js';
import type { PublisherDescriptor } from '../../core/ports/index.js';
import type { NormalizedEndpoint, SubscribedTopic } from '../../core/options/index.js';
import { VanishGrace, byEndpoint } from '../liveness/index.js';
import { type ChannelCurve, EndpointTrust } from '../security/index.js';
import { PublisherLink } from './publisher-link.js';
import { REFUSED_HANDSHAKE_RETRY_MS } from '../timing.js';

export interface FanoutSubscriberConfig {
  readonly channel: string;
  readonly topics: readonly SubscribedTopic[];
  readonly receiveHighWaterMark: number;
  readonly silenceTimeoutMs: number;
  readonly handlers: FanoutHandlerRegistry;
  readonly jobs: JobQueue;
  readonly events: ZLinkEvents;
  /**
   * How long a live link whose descriptor vanished stays: after a store restart (empty) the
   * publisher writes it again within one refresh, and a read in between must not cut it.
   */
  readonly vanishGraceMs: number;
  /** CURVE on this subscriber's SUBs (`security.curve`). @default plain ZMTP */
  readonly curve?: ChannelCurve;
  /** A refused handshake: the store may list another key by now (asks for a read). */
  readonly rediscover?: () => void;
}

/**
 * The subscriber role of one fanout channel: one SUB per publisher endpoint, given by hand or by the Location
 * Store (never both, docs/protocol.md#discovery). A liveness sweep reports a publisher silent when nothing
 * (beacon or event) came for `silenceTimeoutMs`; zeromq reconnects and subscribes again by itself when it
 * returns to the same endpoint, and a run at a new endpoint arrives as a new descriptor. A discovered link
 * goes when its descriptor does (a live one after `vanishGraceMs`).
 */
export class FanoutSubscriber {
  private readonly links = new Map<string, PublisherLink>();
  /** Manual endpoints and the last discovered list by endpoint, with their keys (see `EndpointTrust`). */
  private readonly trust: EndpointTrust<PublisherDescriptor>;
  private readonly vanishing: VanishGrace<PublisherLink>;
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly config: FanoutSubscriberConfig) {
    this.vanishing = new VanishGrace(config.vanishGraceMs);
    this.trust = new EndpointTrust(config.curve, 'publisher', (detail, endpoint) =>
      config.events.emit({
        type: 'protocol_error',
        route: 'fanout',
        channel: config.channel,
        endpoint,
        reason: detail,
      }),
    );
    this.sweep = setInterval(this.checkSilence, Math.min(1000, Math.ceil(config.silenceTimeoutMs / 5)));
  }

  /**
   * A manual publisher endpoint (with CURVE, its key; with `rid`, only that publisher's events are
   * delivered).
   */
  connect(entry: NormalizedEndpoint): void {
    if (this.links.has(entry.endpoint)) return;
    this.trust.manual.set(entry.endpoint, entry);
    this.open(entry.endpoint, entry.rid !== undefined, entry.publicKey);
  }

  /** One full read of the channel's publisher descriptors (never called during a store outage). */
  setDiscovered(descriptors: readonly PublisherDescriptor[]): void {
    if (this.closed) return;
    const listed = byEndpoint(
      descriptors,
      (d) => d.channel === this.config.channel && this.trust.speaksOurs(d),
    );
    this.trust.listed = listed;
    for (const endpoint of listed.keys()) {
      const link = this.links.get(endpoint);
      const key = this.trust.connectKey(endpoint, link?.key);
      // With CURVE a SUB talks to the key it connected to: a publisher no longer listed under that key
      // (restarted with a new pair) gets a new link.
      if (link && link.key !== key) this.replace(link, key);
      else if (link) {
        this.vanishing.listed(link);
        link.recheck();
      } else if (this.config.curve === undefined || key !== undefined) this.open(endpoint, true, key);
    }
    const now = Date.now();
    for (const [endpoint, link] of this.links) {
      if (listed.has(endpoint)) continue;
      if (!this.vanishing.mustGo(link, link.state === 'alive', now)) continue;
      this.links.delete(endpoint);
      void link.close();
    }
  }

  snapshot() {
    return [...this.links.values()].map((l) => ({
      endpoint: l.endpoint,
      state: l.state,
      rid: l.beacon?.rid,
      generation: l.beacon?.generation,
      ...l.counters,
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    await Promise.all([...this.links.values()].map((l) => l.close()));
    this.links.clear();
  }

  /**
   * A link's handshake was refused: a moment later (libzmq keeps retrying meanwhile, backing off), a
   * link to the next key the publisher may hold — a roll's second key, or another one listed at that
   * endpoint (`EndpointTrust.connectKey`). With one key known nothing changes.
   */
  private readonly refused = (link: PublisherLink): void => {
    setTimeout(() => {
      if (this.closed || this.links.get(link.endpoint) !== link) return;
      const key = this.trust.connectKey(link.endpoint, link.key, true);
      if (key !== undefined && key !== link.key) this.replace(link, key);
    }, REFUSED_HANDSHAKE_RETRY_MS).unref();
  };

  /**
   * A new link to `link`'s endpoint under `key`, delivering as the old one did (none under CURVE without a
   * key).
   */
  private replace(link: PublisherLink, key: string | undefined): void {
    this.links.delete(link.endpoint);
    this.vanishing.forget(link);
    void link.close();
    if (this.config.curve === undefined || key !== undefined)
      this.open(link.endpoint, link.needsConfirmation, key);
  }

  /**
   * `confirm`: nothing is delivered before a beacon named an accepted run (discovered, or a manual `rid`).
   */
  private open(endpoint: string, confirm: boolean, key: string | undefined): void {
    const { channel, topics, receiveHighWaterMark, handlers, jobs, events, curve, rediscover } = this.config;
    const link = new PublisherLink({
      channel,
      endpoint,
      topics,
      receiveHighWaterMark,
      handlers,
      jobs,
      events,
      needsConfirmation: confirm,
      accepts: (beacon) => this.trust.accepts(endpoint, beacon, key) === true,
      curve,
      key,
      rediscover,
      onRefused: this.refused,
    });
    this.links.set(endpoint, link);
    try {
      link.start();
    } catch (error) {
      this.links.delete(endpoint);
      void link.close();
      events.emit({
        type: 'protocol_error',
        route: 'fanout',
        channel,
        endpoint,
        reason: `cannot connect: ${(error as Error).message}`,
      });
    }
  }

  private readonly checkSilence = (): void => {
    const now = Date.now();
    for (const [endpoint, link] of this.links) {
      if (link.state !== 'alive' || !link.silentAt(now, this.config.silenceTimeoutMs)) continue;
      link.silent();
      // Kept only because it was alive; its descriptor is gone, so now it goes too.
      if (this.vanishing.forget(link)) {
        this.links.delete(endpoint);
        void link.close();
      }
    }
  };
}
