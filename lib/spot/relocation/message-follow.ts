import type { WireError } from '../../core/errors.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import { RESOLVED } from '../../core/calls/index.js';
import type { MeshLink, NodeRun } from '../../core/ports/index.js';
import { encodeMessageFollow, relayedCallBytes, writeObjectFences } from '../wire/index.js';
import type { InboundObjectCall, ObjectAnswer } from '../owner/index.js';
import type { FollowRefusal, FollowRoute, FollowRoutes } from './follow-routes.js';
import { encodeCall } from './capture.js';
import { NOTICE_DELAY_MS } from '../timing/index.js';

/** What relaying needs: the mesh to the new owner and back to the sender, and the committed routes. */
export interface MessageFollowConfig {
  readonly mesh: string;
  readonly link: MeshLink;
  readonly routes: FollowRoutes;
  readonly events: ZLinkEvents;
  /**
   * `messageFollowNotice`: tell the sender of a relayed message (off: its route lives on until it expires).
   */
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
 * Message Follow on the source of a committed move (docs/protocol.md#message-follow). A call whose fences
 * name a route this node held is relayed to the new owner with the same operation id, incarnation,
 * payload, metadata, trace and reply route, one hop more; it reads no store and runs no handler, and
 * never answers for the new owner. On a message's first relay the runtime that sent it is told
 * (record 50), once per route and sender, so it drops the cache entry it used.
 */
export class MessageFollow {
  /** When this node last relayed a call (by `Date.now()`), 0 before it ever did: a drain waits for quiet. */
  lastRelayAt = 0;
  /** Notices claimed and not yet sent, in claim order (`notify`). */
  private readonly notices: { call: InboundObjectCall; route: FollowRoute; sender: NodeRun }[] = [];

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
   * Relays `call` (a send or request from run `from`) along its route, refuses it (`followExpired`,
   * `followHops`, the new owner not reachable: `Unavailable`; `generationMismatch`:
   * `InvalidOperation`), or says no route names it. A call off the wire goes on as the bytes it came
   * in, its address and hop count rewritten (`relayedCallBytes`); a local caller's is encoded. Never throws.
   */
  relay(call: InboundObjectCall, from: NodeRun): RelayOutcome {
    const { routes, link } = this.config;
    const decision = routes.decide(call.objectKind, call.id, call.fences, call.hops);
    if (decision.tag === 'refuse') {
      if (decision.reason === 'noFollowRoute') return { tag: 'none' };
      return { tag: 'refused', error: refusalOf(call, decision.code, decision.reason) };
    }
    const { route, hops } = decision;
    const bytes =
      (call.wire && relayedCallBytes(call.wire, call.messageKind, route.address, hops)) ??
      encodeCall(call, route.address, hops);
    // The follow queue is unbounded (docs/protocol.md#message-follow): past the send queue's bound, as
    // answers are.
    if (!link.answer(route.target.owner.rid, bytes))
      return { tag: 'refused', error: refusalOf(call, 'Unavailable', 'followTargetUnreachable') };
    if (hops === 1 && this.config.notices) this.notify(call, route, from);
    this.relayedNow();
    const { events } = this.config;
    if (events.perMessage)
      events.emit({
        type: 'object_relocation',
        phase: 'followed',
        mesh: this.config.mesh,
        objectKind: call.objectKind,
        id: call.id,
        peerRid: route.target.owner.rid,
        hops,
        packet: call.packet,
      });
    return { tag: 'relayed', route, hops };
  }

  /**
   * `relay`, with its outcome answered: `true` when the call went on or was refused here (`answer`
   * told of a refusal), `false` when no route names it. `from`: the run that sent it (this one for
   * a call of this node's own callers, as the host admits it).
   */
  take(call: InboundObjectCall, from: NodeRun, answer: ObjectAnswer): boolean {
    const outcome = this.relay(call, from);
    if (outcome.tag === 'refused') answer.error(outcome.error);
    return outcome.tag !== 'none';
  }

  /**
   * Tells the sender of a message on the old route, once per route and sender; a lost notice costs
   * latency only. Claimed now; written and sent `NOTICE_DELAY_MS` later, with any others claimed
   * meanwhile (why not at once: see `NOTICE_DELAY_MS`). Even the timer is set only once this turn's
   * writes are out: set here, cold, it cost the relayed call 30-40 µs before it left.
   */
  private notify(call: InboundObjectCall, route: FollowRoute, sender: NodeRun): void {
    if (!this.config.routes.claimNotice(route, sender)) return;
    if (this.notices.push({ call, route, sender }) === 1) void RESOLVED.then(this.armNotices);
  }

  private readonly armNotices = (): void => {
    setTimeout(this.sendNotices, NOTICE_DELAY_MS).unref();
  };

  /** Runs from a timer: nothing may throw out of it (a notice that cannot be written is as one lost). */
  private readonly sendNotices = (): void => {
    const { routes, link } = this.config;
    for (const { call, route, sender } of this.notices.splice(0)) {
      const { correlation, origin } = call;
      let sent = false;
      try {
        const notice = encodeMessageFollow({
          objectKind: call.objectKind,
          id: call.id,
          source: call.fences,
          target: route.target,
          hops: 1,
          queued: 0,
          operationId: call.operationId,
          replyRoute: correlation !== undefined && origin !== undefined ? { correlation, origin } : undefined,
        });
        sent = link.answer(sender.rid, notice);
      } catch {
        // The next relay on this route may try again (`noticeSent` false).
      }
      routes.noticeSent(route, sender, sent);
    }
  };
}

/** The wire error a refused relay ends with: a stale route for the caller to drop, or another incarnation. */
function refusalOf(
  r: InboundObjectCall,
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
