import type { MulticastTopic } from '../../core/wire/index.js';
import { RESOLVED } from '../../core/calls/index.js';
import type { MeshLink } from '../../core/ports/index.js';
import type { Activation, ActivationWatch } from '../owner/index.js';
import type { LocalEvent } from './local-event.js';

/**
 * The Spots of this node subscribed to each Logical Multicast (channel, topic), and what the node
 * advertises of them. A Spot's subscriptions open when it enters the node's activation table (created
 * here, or adopted by a move's cutover) and close when it leaves it (deactivated, destroyed, moved
 * away): the table tells this index as it changes (`ActivationWatch`), so no other path keeps a copy.
 *
 * The advertisement changes only when a pair gains its first Spot or loses its last; changes made in
 * one turn leave as one state (thousands of Spots activating at once cost one record per peer).
 */
export class LocalTopics implements ActivationWatch {
  private readonly byChannel = new Map<string, Map<string, Set<Activation>>>();
  /** Spots arriving by a move (restored here, not adopted yet): the events that wait for them. */
  private readonly arriving = new Map<Activation, LocalEvent[]>();
  private scheduled = false;
  private closed = false;

  constructor(private readonly link: MeshLink) {}

  /** Spot `a` arrives by a move: subscribed from now on, advertised at once, its events held for it. */
  arrive(a: Activation): void {
    this.arriving.set(a, []);
    this.added(a);
    this.advertise();
  }

  /** The events held for Spot `a` while it arrives; `undefined` once it opened (or when it never arrived). */
  held(a: Activation): LocalEvent[] | undefined {
    return this.arriving.size === 0 ? undefined : this.arriving.get(a);
  }

  /** Arriving `a` opened here (it is in the table now): the events held for it, in arrival order. */
  opened(a: Activation): LocalEvent[] {
    const held = this.arriving.get(a) ?? [];
    this.arriving.delete(a);
    return held;
  }

  /** Arriving `a` will not open here (its move was given up): its subscriptions go with its events. */
  abandoned(a: Activation): void {
    if (this.arriving.delete(a)) this.removed(a);
  }

  /** The Spots subscribed to (`channel`, `topic`) here now: two map reads; `undefined` when none. */
  subscribers(channel: string, topic: string): ReadonlySet<Activation> | undefined {
    return this.byChannel.get(channel)?.get(topic);
  }

  added(a: Activation): void {
    const table = a.subscriptions;
    if (table === undefined) return;
    for (const [channel, topics] of table) {
      let byTopic = this.byChannel.get(channel);
      if (!byTopic) this.byChannel.set(channel, (byTopic = new Map()));
      for (const topic of topics.keys()) {
        let spots = byTopic.get(topic);
        if (!spots) {
          byTopic.set(topic, (spots = new Set()));
          this.changed();
        }
        spots.add(a);
      }
    }
  }

  removed(a: Activation): void {
    const table = a.subscriptions;
    if (table === undefined) return;
    for (const [channel, topics] of table) {
      const byTopic = this.byChannel.get(channel);
      if (!byTopic) continue;
      for (const topic of topics.keys()) {
        const spots = byTopic.get(topic);
        if (!spots?.delete(a) || spots.size > 0) continue;
        byTopic.delete(topic);
        if (byTopic.size === 0) this.byChannel.delete(channel);
        this.changed();
      }
    }
  }

  /** The pairs with at least one subscribed Spot, in the order they first gained one. */
  pairs(): MulticastTopic[] {
    const out: MulticastTopic[] = [];
    for (const [channel, topics] of this.byChannel)
      for (const topic of topics.keys()) out.push({ channel, topic });
    return out;
  }

  /** Stops advertising (the node is closing: its Spots are going, its peers learn that it is gone). */
  close(): void {
    this.closed = true;
  }

  /** Advertises at the end of this turn's microtasks: every change of the turn in one state. */
  private changed(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    void RESOLVED.then(() => this.scheduled && this.advertise());
  }

  /** Advertises the pairs now (a change scheduled for later is then already told). */
  private advertise(): void {
    this.scheduled = false;
    if (!this.closed) this.link.advertise(this.pairs());
  }
}
