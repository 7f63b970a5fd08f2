import {
  type MulticastTopicMetrics,
  type NodeRun,
  OBJECT_REFUSALS,
  type WireError,
  type ZLinkEvents,
  countCode,
} from '../../core/index.js';
import type { Activation } from '../owner/activation.js';
import type { ObjectHost } from '../owner/object-host.js';
import type { InboundObjectCall, ObjectAnswer, SpotEventStamp } from '../owner/object-call.js';
import { runObjectCall } from '../owner/object-dispatch.js';
import { fencedRefusal } from '../owner/authority-claims.js';
import { refusal } from '../owner/refusals.js';
import { heldRoute } from '../relocation/capture.js';

/** One event as every subscribed Spot of this node takes it: decoded once per record, shared. */
export interface LocalEvent {
  readonly packet: string;
  readonly payload: Uint8Array;
  readonly stamp: SpotEventStamp;
  readonly metrics: MulticastTopicMetrics;
}

/** What delivering needs of the node. */
export interface DeliveryDeps {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly host: ObjectHost;
  readonly events: ZLinkEvents;
}

/**
 * Puts `event` into the queue of Spot `a` as a one-way turn of its subscription's handler, or counts
 * why not: the owner fenced or the queue full (`Rejected`), the Spot ending or moving
 * (`Unavailable`). Exactly one count per Spot per event (delivered then handled or failed, or
 * refused); never throws.
 */
export function deliverEvent(deps: DeliveryDeps, a: Activation, event: LocalEvent): void {
  event.metrics.delivered++;
  const answer = new EventAnswer(deps, a.key.id, event);
  const { host } = deps;
  if (host.fenced) return answer.error(refusal(fencedRefusal(`spot '${a.key.id}'`)));
  // A moving Spot takes no event in this version: its hold carries calls only (counted, never lost silently).
  if (a.state === 'closing' || a.ingress !== undefined) {
    const why = a.state === 'closing' ? 'it is ending' : 'it is moving';
    return answer.error({ code: 'ObjectClosed', message: `spot '${a.key.id}': ${why}` });
  }
  const { info } = event.stamp;
  const call: InboundObjectCall = {
    messageKind: 'send',
    objectKind: 'spot',
    id: a.key.id,
    fences: heldRoute(a, deps.self),
    operationId: '',
    packet: event.packet,
    metadata: undefined,
    payload: event.payload,
    trace: undefined,
    correlation: undefined,
    origin: undefined,
    sourceRid: info.publisherRid,
    hops: 0,
    event: event.stamp,
  };
  runObjectCall(a, call, answer, host.dispatchDeps);
}

/** How one Spot's event turn ends, counted: handled, failed (the handler threw) or refused. */
class EventAnswer implements ObjectAnswer {
  private started = false;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly id: string,
    private readonly event: LocalEvent,
  ) {}

  accepted(): void {
    this.started = true;
  }

  ok(): void {
    this.event.metrics.handled++;
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
