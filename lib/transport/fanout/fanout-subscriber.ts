import type {
  FanoutBeaconRecord,
  FanoutHandlerRegistry,
  JobQueue,
  PublisherDescriptor,
  SubscribedTopic,
  ZLinkEvents,
} from '../../core/index.js';
import { VanishGrace, byEndpoint } from '../vanish-grace.js';
import { PublisherLink } from './publisher-link.js';

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
}

/**
 * The subscriber role of one fanout channel: one SUB per publisher endpoint, given by hand or by
 * the Location Store (never both, guide §6.4). A liveness sweep reports a publisher silent when
 * nothing (beacon or event) came for `silenceTimeoutMs`; zeromq reconnects and subscribes again by
 * itself when it returns to the same endpoint, and a run at a new endpoint arrives as a new
 * descriptor. A discovered link goes when its descriptor does (a live one after `vanishGraceMs`).
 */
export class FanoutSubscriber {
  private readonly links = new Map<string, PublisherLink>();
  /** The last discovered list by endpoint (discovered links only). */
  private listed = new Map<string, PublisherDescriptor[]>();
  private readonly vanishing: VanishGrace<PublisherLink>;
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly config: FanoutSubscriberConfig) {
    this.vanishing = new VanishGrace(config.vanishGraceMs);
    this.sweep = setInterval(this.checkSilence, Math.min(1000, Math.ceil(config.silenceTimeoutMs / 5)));
  }

  /** A manual publisher endpoint. */
  connect(endpoint: string): void {
    if (!this.links.has(endpoint)) this.open(endpoint, false);
  }

  /** One full read of the channel's publisher descriptors (never called during a store outage). */
  setDiscovered(descriptors: readonly PublisherDescriptor[]): void {
    if (this.closed) return;
    const listed = byEndpoint(descriptors, (d) => d.channel === this.config.channel);
    this.listed = listed;
    for (const endpoint of listed.keys()) {
      const link = this.links.get(endpoint);
      if (link) {
        this.vanishing.listed(link);
        link.recheck();
      } else this.open(endpoint, true);
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

  private open(endpoint: string, discovered: boolean): void {
    const { channel, topics, receiveHighWaterMark, handlers, jobs, events } = this.config;
    const link = new PublisherLink({
      channel,
      endpoint,
      topics,
      receiveHighWaterMark,
      handlers,
      jobs,
      events,
      needsConfirmation: discovered,
      accepts: (beacon) => !discovered || this.isListed(endpoint, beacon),
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

  private isListed(endpoint: string, beacon: FanoutBeaconRecord): boolean {
    return (this.listed.get(endpoint) ?? []).some(
      (d) => d.rid === beacon.rid && d.generation === beacon.generation,
    );
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
