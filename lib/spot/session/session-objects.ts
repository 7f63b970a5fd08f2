import type { NodeRun, ObjectRef } from '../../core/index.js';
import type { ObjectSubmission } from '../caller/index.js';
import type { ReadyRoute } from '../resolve/index.js';
import type { ActorBinding } from '../owner/index.js';
import type {
  SessionBindingEndedRecord,
  SessionPushRecord,
  SessionRouteRecord,
  SessionSealRecord,
} from '../wire/index.js';

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
  /** A call on a stored route (`ObjectCaller.callOnRoute`). */
  callOnRoute(route: ReadyRoute, sub: ObjectSubmission): Promise<unknown>;
}

/** What the object layer hands the Session owner's host: Pushes for its sessions, and lost owner runs. */
export interface SessionSink {
  /** A bound Actor's Push for one of this node's sessions (from a peer, or from an Actor here). */
  pushed(r: Omit<SessionPushRecord, 'kind'>): void;
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
