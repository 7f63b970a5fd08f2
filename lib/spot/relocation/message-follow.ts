import {
  type MeshLink,
  type NodeRun,
  type PeerAddress,
  RecordKind,
  type WireError,
  type ZLinkEvents,
  encodeFrameworkFields,
} from '../../core/index.js';
import {
  type ObjectRequestRecord,
  type ObjectSendRecord,
  encodeMessageFollow,
  encodeObjectRequest,
  encodeObjectSend,
  packSessionStamp,
  wireAddress,
  writeObjectFences,
} from '../wire/index.js';
import type { InboundObjectCall, ObjectAnswer } from '../owner/object-call.js';
import type { FollowRefusal, FollowRoute, FollowRoutes } from './follow-routes.js';

/** What relaying needs: the mesh to the new owner and back to the sender, and the committed routes. */
export interface MessageFollowConfig {
  readonly mesh: string;
  readonly link: MeshLink;
  readonly routes: FollowRoutes;
  readonly events: ZLinkEvents;
  /** `messageFollowNotice`: tell the sender of a relayed message (off: its route lives on until it expires). */
  readonly notices: boolean;
}

/** How a message that reached this node on a route it no longer holds ended here. */
export type RelayOutcome =
  /** Sent on to the new owner: it answers on the message's own reply route. */
  | { readonly tag: 'relayed'; readonly route: FollowRoute; readonly hops: number }
  /** Refused with this wire error (the call's terminal, or a one-way send's failure report). */
  | { readonly tag: 'refused'; readonly error: WireError }
  /** No committed route names it: the owner's ordinary stale-route answer applies. */
  | { readonly tag: 'none' };

/**
 * Message Follow on the source of a committed move (spot-actor-routing §2.5). A call whose fences
 * name a route this node held is relayed to the new owner with the same operation id, incarnation,
 * payload, metadata, trace and reply route, one hop more; it reads no store and runs no handler, and
 * never answers for the new owner. On a message's first relay the runtime that sent it is told
 * (record 50), once per route and sender, so it drops the cache entry it used.
 */
export class MessageFollow {
  /** When this node last relayed a call (by `Date.now()`), 0 before it ever did: a drain waits for quiet. */
  lastRelayAt = 0;

  constructor(private readonly config: MessageFollowConfig) {}

  /** A call left this node for an object's new owner: here, or by a move still under way (`OutgoingMove`). */
  relayedNow(): void {
    this.lastRelayAt = Date.now();
  }

  /** Whether a route may apply at all: with none installed, a call costs this check only. */
  get active(): boolean {
    return !this.config.routes.empty;
  }

  /**
   * Relays `r` (a send or request from `from`) along its route, refuses it (`followExpired`,
   * `followHops`, the new owner not reachable: `Unavailable`; `generationMismatch`:
   * `InvalidOperation`), or says no route names it. Never throws.
   */
  relay(r: ObjectSendRecord | ObjectRequestRecord, from: PeerAddress): RelayOutcome {
    const { routes, link } = this.config;
    const decision = routes.decide(r.objectKind, r.id, r.fences, r.hops);
    if (decision.tag === 'refuse') {
      if (decision.reason === 'noFollowRoute') return { tag: 'none' };
      return { tag: 'refused', error: refusalOf(r, decision.code, decision.reason) };
    }
    const { route, hops } = decision;
    const to = wireAddress(r.objectKind, r.id, route.target);
    const fields = r.trace && encodeFrameworkFields(r.trace.traceparent, r.trace.tracestate);
    const stamp = r.session && packSessionStamp(r.session);
    const bytes =
      r.kind === RecordKind.ObjectRequest
        ? encodeObjectRequest(
            r.correlation,
            r.origin,
            to,
            r.operationId,
            r.packet,
            r.metadata,
            r.payload,
            fields,
            hops,
            stamp,
          )
        : encodeObjectSend(to, r.operationId, r.packet, r.metadata, r.payload, fields, hops, stamp);
    // The follow queue is unbounded (§2.5): past the send queue's bound, as answers are.
    if (!link.answer(route.target.owner.rid, bytes))
      return { tag: 'refused', error: refusalOf(r, 'Unavailable', 'followTargetUnreachable') };
    if (hops === 1 && this.config.notices)
      this.notify(r, route, { rid: from.rid, nodeGeneration: from.generation });
    this.relayedNow();
    const { events } = this.config;
    if (events.perMessage)
      events.emit({
        type: 'object_relocation',
        phase: 'followed',
        mesh: this.config.mesh,
        objectKind: r.objectKind,
        id: r.id,
        peerRid: route.target.owner.rid,
        hops,
        packet: r.packet,
      });
    return { tag: 'relayed', route, hops };
  }

  /**
   * `relay`, with its outcome answered: `true` when the call went on or was refused here (`answer`
   * told of a refusal), `false` when no route names it.
   */
  take(r: ObjectSendRecord | ObjectRequestRecord, from: PeerAddress, answer: ObjectAnswer): boolean {
    const outcome = this.relay(r, from);
    if (outcome.tag === 'refused') answer.error(outcome.error);
    return outcome.tag !== 'none';
  }

  /** `take` for a call of this node's own callers (`from` this run), as the host admits it. */
  takeCall(call: InboundObjectCall, from: NodeRun, answer: ObjectAnswer): boolean {
    const { correlation, origin } = call;
    const shared = {
      objectKind: call.objectKind,
      id: call.id,
      fences: call.fences,
      operationId: call.operationId,
      packet: call.packet,
      metadata: call.metadata,
      payload: call.payload,
      trace: call.trace,
      hops: call.hops,
      ...(call.session && { session: call.session }),
    };
    const r: ObjectSendRecord | ObjectRequestRecord =
      correlation !== undefined && origin !== undefined
        ? { kind: RecordKind.ObjectRequest, correlation, origin, ...shared }
        : { kind: RecordKind.ObjectSend, ...shared };
    return this.take(r, { rid: from.rid, generation: from.nodeGeneration }, answer);
  }

  /** Tells the sender of a message on the old route, once per route and sender; a lost notice costs latency only. */
  private notify(r: ObjectSendRecord | ObjectRequestRecord, route: FollowRoute, sender: NodeRun): void {
    const { routes, link } = this.config;
    if (!routes.claimNotice(route, sender)) return;
    const notice = encodeMessageFollow({
      objectKind: r.objectKind,
      id: r.id,
      source: r.fences,
      target: route.target,
      hops: 1,
      queued: 0,
      operationId: r.operationId,
      replyRoute:
        r.kind === RecordKind.ObjectRequest ? { correlation: r.correlation, origin: r.origin } : undefined,
    });
    routes.noticeSent(route, sender, link.answer(sender.rid, notice));
  }
}

/** The wire error a refused relay ends with: a stale route for the caller to drop, or another incarnation. */
function refusalOf(
  r: ObjectSendRecord | ObjectRequestRecord,
  code: 'Unavailable' | 'InvalidOperation',
  reason: FollowRefusal | 'followTargetUnreachable',
): WireError {
  const what = `${r.objectKind} '${r.id}'`;
  if (code === 'InvalidOperation')
    return {
      code: 'ObjectInvalid',
      message: `${what}: the message names generation ${r.fences.objectGeneration}, not the one that moved`,
      details: { reason },
    };
  return {
    code: 'ObjectStale',
    message: `${what}: it moved and the message could not follow it (${reason})`,
    details: { reason, objectKind: r.objectKind, id: r.id, fences: writeObjectFences(r.fences) },
  };
}
