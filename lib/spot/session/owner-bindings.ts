import { ZLinkError, toObjectWireError } from '../../core/errors.js';
import type { MeshLink, NodeRun } from '../../core/ports/index.js';
import {
  type ActorBinding,
  type InboundObjectCall,
  type ObjectAnswer,
  type ObjectHost,
  heldRoute,
  remoteAnswer,
  staleRef,
} from '../owner/index.js';
import type { SessionBindRecord, SessionUnbindRecord } from '../wire/index.js';
import { SESSION_BIND_PACKET, SESSION_UNBIND_PACKET, bindPayload, endPayload } from './session-turns.js';

/**
 * The Actor owner's side of a bind (docs/protocol.md#session-bindings): the ActorRef the Session owner bound
 * by names this node's run and an ObjectGeneration; if this node holds that incarnation, the bind becomes a
 * turn of the Actor on the route it is held on (queued behind its work, carried along if it moves), answered
 * with that route. Never throws; answers once.
 */
export interface OwnerBindingDeps {
  readonly self: NodeRun;
  readonly link: MeshLink;
  readonly host: ObjectHost | undefined;
}

/** Asks the local host to bind (a SessionBind that arrived, or one from a session owned here). */
export function bindHere(
  deps: OwnerBindingDeps,
  actorId: string,
  objectGeneration: number,
  binding: ActorBinding,
  previous: NodeRun | undefined,
  request: { readonly correlation: number; readonly origin: NodeRun } | undefined,
  answer: ObjectAnswer,
): void {
  const what = `bind session '${binding.sessionId}' to actor '${actorId}'`;
  const a = deps.host?.get('actor', actorId);
  if (a === undefined || a.state === 'closing')
    return answer.error(
      toObjectWireError(
        new ZLinkError('Unavailable', `${what}: node '${deps.self.rid}' does not hold the actor`, {
          details: { reason: 'notHere' },
        }),
      ),
    );
  // A new incarnation under the same id never inherits a binding: the application binds it anew.
  if (a.ref.objectGeneration !== objectGeneration)
    return answer.error(toObjectWireError(staleRef(what, objectGeneration, a.ref.objectGeneration)));
  // A local bind has no reply route a move could carry: it waits for the move instead.
  if (request === undefined && a.ingress !== undefined)
    return answer.error(
      toObjectWireError(
        new ZLinkError('Unavailable', `${what}: the actor is moving`, { details: { reason: 'relocating' } }),
      ),
    );
  deps.host?.dispatch(
    runtimeCall(
      deps,
      actorId,
      SESSION_BIND_PACKET,
      bindPayload(binding, previous),
      request,
      heldRoute(a, deps.self),
    ),
    answer,
  );
}

/** A SessionBind from a peer (the Session owner). */
export function answerSessionBind(deps: OwnerBindingDeps, r: SessionBindRecord): void {
  const answer = remoteAnswer(deps.link, r.origin.rid, r.correlation, r.origin.nodeGeneration);
  const binding = {
    ownerRid: r.origin.rid,
    ownerGeneration: r.origin.nodeGeneration,
    listener: r.listener,
    sessionId: r.sessionId,
    bindingGeneration: r.bindingGeneration,
  };
  bindHere(deps, r.actorId, r.objectGeneration, binding, r.previous, r, answer);
}

/**
 * A tombstone from a rebind's new owner: the binding goes in a turn of the Actor, if it is still here;
 * answered either way (nothing held is nothing to remove).
 */
export function answerSessionUnbind(deps: OwnerBindingDeps, r: SessionUnbindRecord): void {
  const answer = remoteAnswer(deps.link, r.origin.rid, r.correlation, r.origin.nodeGeneration);
  const a = deps.host?.get('actor', r.actorId);
  if (a === undefined || a.state === 'closing' || a.sessions === undefined) return answer.ok(null);
  const payload = endPayload(r.sessionOwnerRid, r.sessionId, r.bindingGeneration);
  deps.host?.dispatch(
    runtimeCall(deps, r.actorId, SESSION_UNBIND_PACKET, payload, r, heldRoute(a, deps.self)),
    // Refused (fenced, moving on): the binding will not reach the session any more either way.
    { ok: () => answer.ok(null), error: () => answer.ok(null) },
  );
}

/** A runtime packet to Actor `actorId` on the route given, as a call off the wire would be. */
export function runtimeCall(
  deps: OwnerBindingDeps,
  actorId: string,
  packet: string,
  payload: Uint8Array,
  request: { readonly correlation: number; readonly origin: NodeRun } | undefined,
  fences: InboundObjectCall['fences'],
): InboundObjectCall {
  return {
    messageKind: request ? 'request' : 'send',
    objectKind: 'actor',
    id: actorId,
    fences,
    operationId: `${deps.self.nodeGeneration}:${packet}:${actorId}`,
    packet,
    metadata: undefined,
    payload,
    trace: undefined,
    correlation: request?.correlation,
    origin: request?.origin,
    sourceRid: request?.origin.rid ?? deps.self.rid,
    hops: 0,
  };
}
