import { ZLinkError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { AuthorityStore, MeshLink, NodeRun, RelocationStore } from '../../core/ports/index.js';
import type { ObjectRef } from '../../core/objects/index.js';
import { type ObjectRouteFences, type RelocationRefusal, writeObjectFences } from '../wire/index.js';
import type { Activation, InboundObjectCall, ObjectAnswer, ObjectHost } from '../owner/index.js';
import type { Clock } from '../resolve/index.js';
import type { FollowRoutes } from './follow-routes.js';
import type { MoveMulticast } from '../multicast/index.js';

/** What both ends of a move work with: this node's host, the mesh, the Authority Store. */
export interface MoveContext {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly link: MeshLink;
  readonly host: ObjectHost;
  readonly store: AuthorityStore;
  /** Where each move leaves its record; startup requires it wherever a class is relocatable. */
  readonly relocationStore: RelocationStore | undefined;
  readonly followRoutes: FollowRoutes;
  readonly events: ZLinkEvents;
  readonly clock: Clock;
  /** This node's lease epoch: the OwnerLeaseGeneration an object that arrives here is held under. */
  readonly leaseGeneration: () => number;
  /** An object left this node on route `source` (committed): this node's own cached route to it goes. */
  readonly movedAway: (kind: ObjectKind, id: string, source: ObjectRouteFences) => void;
  /** A call went on to a move's target (a drain waits until none did for a while before it closes). */
  readonly relayed: () => void;
  /**
   * The bound sessions of a moving Actor (docs/protocol.md#bound-actors-that-move); absent: bindings are not
   * told.
   */
  readonly sessions?: MoveSessions;
  /** A moving subscribed Spot's events (see `MoveMulticast`); absent: events are not told. */
  readonly multicast?: MoveMulticast;
}

/** What a move does with a bound Actor's sessions: seal each binding first, give it its route last. */
export interface MoveSessions {
  /**
   * Seals every binding of `a` at its Session owner (command 42, answered by 43 behind everything that
   * owner relayed before): from then on it holds what it would relay to the Actor. Rejects when one did
   * not answer within `ms`.
   */
  seal(a: Activation, relocationId: string, ms: number): Promise<void>;
  /**
   * Tells every binding's Session owner how the move ended for it (command 44, one-way, never
   * retried): `commit` with the route `a` is held on here (the target), or `abort` (the source: the
   * old route stays). What the owner held then goes on that route, in order.
   */
  route(a: Activation, relocationId: string, outcome: 'commit' | 'abort'): void;
}

/** What a move is asked to move (`Relocations.move`, `memberMove`, ObjectControl `relocate`). */
export interface MoveRequest {
  readonly kind: ObjectKind;
  readonly id: string;
  /** The incarnation a ref names; `undefined` for an id (whatever is live). */
  readonly objectGeneration: number | undefined;
  /** The NodeRid to move to; `undefined`: placement among the other servers hosting the type. */
  readonly target: string | undefined;
  /** Until relay-ready; after it the move ends by the target's commit or refusal. */
  readonly timeoutMs: number;
  /**
   * A move the runtime makes of a Spot's group (a member following its Spot, a drain emptying the
   * node): a member Actor's own rule (`memberMove`) does not apply. Never set from outside a node.
   */
  readonly forGroup?: boolean;
}

/**
 * How a move ended (`ZLinkObjects.relocate`): `committed` — the object runs on `owner` now, as `ref`
 * names it — or `aborted` — it stayed where it was, and `code` / `reason` say why.
 */
export type RelocationResult = (
  | {
      readonly outcome: 'committed';
      readonly owner: string;
      readonly ref: ObjectRef;
      /** How long calls to the object waited: from the seal on the old node until the commit came back. */
      readonly pauseMs: number;
    }
  | { readonly outcome: 'aborted'; readonly code: string; readonly reason: string }
) & {
  /** A Spot's move with members: where each member Actor held beside it ended up. */
  readonly members?: readonly MemberPlacement[];
};

/** Where one member Actor of a moved Spot runs after the move: `owner`, beside its Spot or not. */
export interface MemberPlacement {
  readonly id: string;
  readonly owner: string;
  readonly withSpot: boolean;
}

/** The size of one chunk of a moving object's image: well inside any frame a mesh carries. */
export const RELOCATION_CHUNK_BYTES = 64 * 1024;

/** The most image bytes a target takes for one move (state, waiting calls, timers). */
export const RELOCATION_MAX_IMAGE_BYTES = 64 * 1024 * 1024;

export const refusalOf = (code: string, message: string): RelocationRefusal => ({ code, message });

/** A member's move that could not start or failed, as an aborted outcome. */
export function abortedBy(error: unknown): RelocationResult {
  return error instanceof ZLinkError
    ? { outcome: 'aborted', code: error.code, reason: error.message }
    : { outcome: 'aborted', code: 'Error', reason: String(error) };
}

/**
 * A call that could not reach the object's new owner: it ends `Unavailable`, and its sender drops the route.
 */
export function unreachable(h: { readonly call: InboundObjectCall; readonly answer: ObjectAnswer }): void {
  const { call } = h;
  h.answer.error({
    code: 'ObjectStale',
    message: `${call.objectKind} '${call.id}' moved and its new owner is not reachable`,
    details: {
      reason: 'followTargetUnreachable',
      objectKind: call.objectKind,
      id: call.id,
      fences: writeObjectFences(call.fences),
    },
  });
}
