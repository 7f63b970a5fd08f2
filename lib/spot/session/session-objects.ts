import { fromObjectWireError } from '../../core/errors.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { CallSink, PendingRequests } from '../../core/calls/index.js';
import type { MeshLink, NodeRun } from '../../core/ports/index.js';
import type { ObjectRef } from '../../core/objects/index.js';
import { askPeer, type ObjectCaller, type ObjectSubmission } from '../caller/index.js';
import type { ReadyRoute } from '../resolve/index.js';
import type { ActorBinding, ObjectHost } from '../owner/index.js';
import {
  type SessionBindingEndedRecord,
  type SessionPushRecord,
  type SessionRoomPushRecord,
  type SessionRouteRecord,
  type SessionSealRecord,
  encodeSessionBind,
} from '../wire/index.js';
import { bindHere } from './owner-bindings.js';

/**
 * What the Session owner's host needs of the object layer on its mesh (`ObjectLayer.sessionObjects`):
 * the bind request, calls on a stored route, and who this node is. Nothing here reads a store.
 */
export interface SessionObjects {
  readonly mesh: string;
  readonly self: NodeRun;
  /**
   * Asks the owner `ref` names (this node or a peer) to bind; resolves with its answer (the route it
   * holds the Actor on: see `bindingRouteOf`). Ends `InvalidOperation` (another incarnation),
   * `Unavailable` (not there, moving, the owner not reachable), `Rejected` (fenced), `Timeout`.
   */
  bind(
    ref: ObjectRef,
    binding: ActorBinding,
    previous: NodeRun | undefined,
    timeoutMs: number,
  ): Promise<unknown>;
  /** A call on a stored route, its end told to `sink` once (`ObjectCaller.callOnRoute`); never throws. */
  callOnRoute(route: ReadyRoute, sub: ObjectSubmission, sink: CallSink): void;
}

/** What the object layer hands the Session owner's host: Pushes for its sessions, and lost owner runs. */
export interface SessionSink {
  /** A bound Actor's Push for one of this node's sessions (from a peer, or from an Actor here). */
  pushed(r: Omit<SessionPushRecord, 'kind'>): void;
  /** A Spot's Push for several of this node's sessions (49), each checked as its own Push would be. */
  roomPushed(r: Omit<SessionRoomPushRecord, 'kind'>): void;
  /** A bound Actor's incarnation was destroyed (48): that binding ended, and the session is told once. */
  bindingEnded(r: Omit<SessionBindingEndedRecord, 'kind'>): void;
  /** Node run `run` left the mesh: bindings routed to it are lost. */
  ownerDown(run: NodeRun, reason: string): void;
  /** A moving Actor's source seals a binding (42): relays for it are held until its route (44). */
  sealed(
    r: Pick<SessionSealRecord, 'listener' | 'sessionId' | 'bindingGeneration' | 'relocationId' | 'actorId'>,
  ): void;
  /** The move's end for a binding (44): the new route, or the old one kept; what was held goes. */
  routed(r: Omit<SessionRouteRecord, 'kind'>): void;
}

/**
 * What both sides of a session binding work with on this node (the Session owner's host and the
 * bound Actor's owner): who this node is, the mesh, its host when it holds objects, its session
 * listeners' sink when it has any. Built once by `ObjectLayer`.
 */
export interface SessionDeps {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly link: MeshLink;
  readonly pending: PendingRequests;
  readonly events: ZLinkEvents;
  readonly host: ObjectHost | undefined;
  readonly sessions: SessionSink | undefined;
}

/**
 * The object layer as the Session owner's host sees it (`SessionObjects`): a bind asked of the owner
 * `ref` names (the host here, else one SessionBind to the peer), and relays on the caller.
 */
export function sessionObjects(deps: SessionDeps, caller: ObjectCaller): SessionObjects {
  const { mesh, self } = deps;
  return {
    mesh,
    self,
    bind: (ref: ObjectRef, binding: ActorBinding, previous: NodeRun | undefined, timeoutMs: number) => {
      const what = `bind session '${binding.sessionId}' to actor '${ref.id}'`;
      if (ref.rid === self.rid)
        return new Promise((resolve, reject) =>
          bindHere(deps, ref.id, ref.objectGeneration, binding, previous, undefined, {
            ok: resolve,
            error: (wire) => reject(fromObjectWireError(wire, what)),
          }),
        );
      return askPeer(
        deps,
        ref.rid,
        (correlation) =>
          encodeSessionBind({
            correlation,
            origin: self,
            actorId: ref.id,
            objectGeneration: ref.objectGeneration,
            listener: binding.listener,
            sessionId: binding.sessionId,
            bindingGeneration: binding.bindingGeneration,
            previous,
          }),
        timeoutMs,
        what,
      );
    },
    callOnRoute: (route, sub, sink) => caller.callOnRoute(route, sub, sink),
  };
}
