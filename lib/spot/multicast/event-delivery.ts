import { OBJECT_REFUSALS, type WireError } from '../../core/errors.js';
import { type ZLinkEvents, countCode } from '../../core/observe/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import type { ZLinkMulticastEvent } from '../../core/objects/index.js';
import type { CarriedEvent, SpotEventRecord, SpotEventSource } from '../wire/index.js';
import {
  type Activation,
  fencedRefusal,
  heldRoute,
  type InboundObjectCall,
  type ObjectAnswer,
  type ObjectHost,
  refusal,
  runObjectCall,
} from '../owner/index.js';
import type { LocalTopics } from './local-topics.js';
import type { LocalEvent } from './local-event.js';

export type { LocalEvent } from './local-event.js';

/** What counting an event's end needs: where it happened. */
export interface EventCounting {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly events: ZLinkEvents;
}

/** What delivering needs of the node. */
export interface DeliveryDeps extends EventCounting {
  readonly host: ObjectHost;
  /** Where the events of a Spot arriving by a move wait for it. */
  readonly local: LocalTopics;
  /** How many events may wait for one arriving Spot (its queue limit). */
  readonly queueLimit: number;
}

/** What a subscribed handler sees as `ctx.multicast`: frozen, one per event, shared by its Spots. */
export function multicastInfo(
  channel: string,
  topic: string,
  publisherRid: string,
  from: SpotEventSource | undefined,
): ZLinkMulticastEvent {
  return Object.freeze({ channel, topic, publisherRid, from: from && Object.freeze({ ...from }) });
}

/**
 * Puts `event` into the queue of Spot `a` as a one-way turn of its subscription's handler — into its
 * move's hold while it moves — or counts why not: the owner fenced or the queue full (`Rejected`),
 * the Spot ending (`Unavailable`). Exactly one count per Spot per event (delivered, then handled,
 * failed or skipped as a duplicate; or refused); never throws.
 */
export function deliverEvent(deps: DeliveryDeps, a: Activation, event: LocalEvent): void {
  event.metrics.delivered++;
  const answer = new EventAnswer(deps, a.key.id, event);
  const { host } = deps;
  if (host.fenced) return answer.error(refusal(fencedRefusal(`spot '${a.key.id}'`)));
  if (a.state === 'closing')
    return answer.error({ code: 'ObjectClosed', message: `spot '${a.key.id}': it is ending` });
  const held = deps.local.held(a);
  if (held !== undefined) {
    // Arriving by a move: it waits behind what the old owner carries (`SpotMulticast.opened`).
    if (held.length < deps.queueLimit) return void held.push(event);
    const message = `spot '${a.key.id}': ${deps.queueLimit} events already wait for it to arrive`;
    return answer.error({ code: 'ObjectRefused', message });
  }
  // A moving Spot's hold keeps it with the calls, for its new owner (or for itself, should the move fail).
  if (a.ingress !== undefined) return a.ingress(eventCall(a, deps.self, event), answer);
  runObjectCall(a, eventCall(a, deps.self, event), answer, host.dispatchDeps);
}

/** An event that waited for arriving Spot `a`, run now that it opened here (counted when it was held). */
export function runHeldEvent(deps: DeliveryDeps, a: Activation, event: LocalEvent): void {
  const answer = new EventAnswer(deps, a.key.id, event);
  runObjectCall(a, eventCall(a, deps.self, event), answer, deps.host.dispatchDeps, true);
}

/**
 * An event a move carried (it waited for Spot `a` on the old owner, or reached it there sealed), as
 * the call and answer the new owner runs and counts it with; `undefined` when it names another Spot.
 */
export function carriedEvent(
  deps: EventCounting,
  a: Activation,
  r: SpotEventRecord & { readonly carried: CarriedEvent },
): { readonly call: InboundObjectCall; readonly answer: ObjectAnswer } | undefined {
  if (r.carried.spotId !== a.key.id) return undefined;
  const event: LocalEvent = {
    packet: r.packet,
    payload: r.payload,
    stamp: {
      info: multicastInfo(r.channel, r.topic, r.carried.publisherRid, r.from),
      publisherGeneration: r.carried.publisherGeneration,
      seq: r.seq,
    },
    metrics: deps.events.metrics.multicast.of(deps.mesh, r.channel, r.topic),
  };
  return { call: eventCall(a, deps.self, event), answer: new EventAnswer(deps, a.key.id, event) };
}

/** One event as a one-way call of Spot `a` on the route it is held on here. */
function eventCall(a: Activation, self: NodeRun, event: LocalEvent): InboundObjectCall {
  return {
    messageKind: 'send',
    objectKind: 'spot',
    id: a.key.id,
    fences: heldRoute(a, self),
    operationId: '',
    packet: event.packet,
    metadata: undefined,
    payload: event.payload,
    trace: undefined,
    correlation: undefined,
    origin: undefined,
    sourceRid: event.stamp.info.publisherRid,
    hops: 0,
    event: event.stamp,
  };
}

/** How one Spot's event turn ends, counted: handled, failed (the handler threw) or refused. */
class EventAnswer implements ObjectAnswer {
  private started = false;

  constructor(
    private readonly deps: EventCounting,
    private readonly id: string,
    private readonly event: LocalEvent,
  ) {}

  accepted(): void {
    this.started = true;
  }

  ok(): void {
    this.event.metrics.handled++;
  }

  skipped(): void {
    this.event.metrics.duplicates++;
  }

  error(error: WireError): void {
    const { metrics, packet, stamp } = this.event;
    const code = this.started
      ? error.code
      : ((OBJECT_REFUSALS as Record<string, string | undefined>)[error.code] ?? error.code);
    countCode(this.started ? metrics.failed : metrics.refused, code);
    this.deps.events.emit({
      type: 'multicast',
      result: this.started ? 'failed' : 'refused',
      mesh: this.deps.mesh,
      channel: stamp.info.channel,
      topic: stamp.info.topic,
      packet,
      id: this.id,
      publisherRid: stamp.info.publisherRid,
      code,
      reason: error.message,
    });
  }
}
