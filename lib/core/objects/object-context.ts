import type { HandlerFn, MessageKind } from '../calls/handlers.js';
import type { ZLinkMetadata } from '../wire/metadata.js';
import type { ObjectClassDescription } from './object-classes.js';
import type { ObjectKind } from '../kinds.js';
import type { ZLinkMulticastEvent, ZLinkSpotPublishCall } from './multicast.js';

/**
 * What object code sees (docs/architecture.md#public-surface): refs, the handler and lifecycle contexts, the
 * timers, and the adapter port through which the object runtime builds instances (Nest's DI in the
 * Nest module, `new` without it). Plain types: `lib/spot` implements them, `lib/nest` adapts them.
 */

/**
 * One incarnation of one object, as its creation returned it: frozen, compared by value. A ref is
 * never a message target (calls go by global id); `destroy(ref)` checks its `objectGeneration`.
 */
export interface ObjectRef {
  readonly kind: ObjectKind;
  readonly type: string;
  readonly id: string;
  /** Grows with every incarnation under the same id (a create after a destroy, a takeover). */
  readonly objectGeneration: number;
  /** The MeshName the object lives on and the NodeRid of its owner when the ref was made. */
  readonly mesh: string;
  readonly rid: string;
}

export interface SpotRef extends ObjectRef {
  readonly kind: 'spot';
}

export interface ActorRef extends ObjectRef {
  readonly kind: 'actor';
}

/** Identifies one timer of one object activation; ids are never reused within an activation. */
export type ZLinkTimerId = number;

/**
 * `ctx.timers`: callbacks run as turns of the object, never beside a handler; a callback that comes
 * due while the owner lease is fenced waits until it is held again. All of them end with the
 * activation. `ms` must be a finite number >= 0 (an interval's > 0); `label` names it in snapshots.
 */
export interface ZLinkObjectTimers {
  setTimeout(
    callback: () => void | PromiseLike<void>,
    ms: number,
    label?: string,
    options?: ZLinkTimerOptions,
  ): ZLinkTimerId;
  setInterval(
    callback: () => void | PromiseLike<void>,
    ms: number,
    label?: string,
    options?: ZLinkTimerOptions,
  ): ZLinkTimerId;
  clear(id: ZLinkTimerId): void;
}

/** How a timer is armed. */
export interface ZLinkTimerOptions {
  /**
   * On a persistent class (`persist`): the timer is saved with the state and armed again wherever the
   * object comes back (docs/objects.md#durable-timers), by the wall clock — a timeout that came due
   * meanwhile fires at once, an interval keeps its beat. `label` must name a method of the object: it is
   * what runs then (the callback itself cannot be saved). @default false
   */
  readonly durable?: boolean;
}

/** What every object context holds: which object, which incarnation, its timers. */
export interface ZLinkObjectScope {
  /** `'spot'` or `'actor'`: the kind of target a handler serves (see `ZLinkTargetKind`). */
  readonly target: ObjectKind;
  readonly type: string;
  readonly id: string;
  readonly objectGeneration: number;
  readonly self: ObjectRef;
  readonly timers: ZLinkObjectTimers;
  /** The Spot an Actor is a member of, or a Spot's member Actors: a live view, read in the object's turns. */
  readonly membership: ZLinkMembership;
  /**
   * On an Actor, the end-user sessions bound to it; on a Spot, those bound to its member Actors
   * (docs/sessions.md#room-pushes). See `ZLinkBoundSessions`.
   */
  readonly sessions: ZLinkBoundSessions;
  /** A persistent object's saved state: see `ZLinkObjectState`. */
  readonly state: ZLinkObjectState;
  /**
   * Publishes `event` by Logical Multicast to every Spot subscribed to (`channel`, topic) on the object
   * mesh — this one too, when it subscribes (its turn comes after the current one). `topic` defaults to
   * `packet`. Nothing happens until `.async()`; see `ZLinkSpotPublishCall` for how it ends.
   */
  publish(
    channel: string,
    packet: string,
    event: unknown,
    options?: { topic?: string },
  ): ZLinkSpotPublishCall;
}

/**
 * Spot membership as the object sees it (`ctx.membership`), changed only by `ZLinkObjects.join` /
 * `leave` and by a member's deactivation, each as a turn of the object: it never changes while a
 * handler runs. It moves with the object.
 */
export interface ZLinkMembership {
  /** On an Actor: the id of the Spot it is a member of; `undefined` when none (and always on a Spot). */
  readonly spot: string | undefined;
  /** On a Spot: the ids of its member Actors, in the order they joined (empty on an Actor). */
  members(): readonly string[];
  /** On a Spot: whether Actor `id` is a member. */
  has(id: string): boolean;
}

/**
 * Why an Actor stopped being a member of a Spot (`onActorLeave(ctx, actor, reason)`): `left` by
 * `ZLinkObjects.leave`, else the way the Actor's activation ended (`destroyed`, `shutdown`,
 * `takenOver`, `failed`) — a member that moves stays a member.
 */
export type MemberLeaveReason = 'left' | 'destroyed' | 'shutdown' | 'takenOver' | 'failed';

/** What a `@SpotHandler` / `@ActorHandler` learns about the message besides its payload. */
export interface ZLinkObjectContext extends ZLinkObjectScope {
  readonly kind: MessageKind;
  readonly packet: string;
  /** Frozen snapshot; copy it to keep it past the handler's turn. */
  readonly metadata: ZLinkMetadata;
  /** Request correlation; `undefined` for a one-way send. */
  readonly correlation: number | undefined;
  /** The NodeRid of the node the call came from (this node's own for a local call). */
  readonly sourceRid: string;
  /**
   * The end-user session the message came from, when a Session owner relayed it over a binding of this
   * Actor; `undefined` for any other call.
   */
  readonly session: ZLinkSessionRef | undefined;
  /**
   * `sessions.push`: a Push to every session bound to this Actor — on a Spot, to every session bound to
   * one of its members, once each; returns how many sessions it was handed to.
   */
  push(packet: string, msg: unknown): number;
  /**
   * On a `@SpotSubscribe` handler: the event's channel, topic and publisher; `undefined` for any other call.
   */
  readonly multicast: ZLinkMulticastEvent | undefined;
}

/**
 * `onActivate(ctx)`: `init` is what the creating call passed (`createSpot(..., { init })`, `.instance(type,
 * init)`).
 */
export interface ZLinkActivationContext extends ZLinkObjectScope {
  readonly init: unknown;
  /**
   * On a persistent class (`persist`), set when the object came back with saved state: `restore(state,
   * ctx)` ran just before, with the state as of this store version. `undefined` for a new object, and
   * on a class that is not persistent.
   */
  readonly restored: ZLinkRestoredState | undefined;
}

/** What `onActivate` learns of the state a persistent object was restored from. */
export interface ZLinkRestoredState {
  /** The State Store's version of the row it came from (one more per write). */
  readonly version: number;
  /** The class's `persist.version` the state was saved under (`migrate` brought it up to today's). */
  readonly schemaVersion: number;
  /** When it was saved, in ms since the epoch, by the store's clock. */
  readonly savedAt: number;
}

/**
 * `ctx.state`: a persistent object's saved state (docs/objects.md#durable-objects). On a class that is
 * not persistent, `persistent` is `false` and `save()` rejects `InvalidOperation`.
 */
export interface ZLinkObjectState {
  readonly persistent: boolean;
  /** The State Store's version of what this object saved last (0: nothing saved yet). */
  readonly version: number;
  /**
   * Saves the state now: `capture()` runs in this turn, and the promise resolves once the State Store
   * took it (or a later capture). Call it from the object's own turn (a handler, a timer callback,
   * `onActivate`): elsewhere it rejects `InvalidOperation`. Rejects `Unavailable` (`details.reason:
   * 'stateNotSaved'`) when the store did not take it, `InvalidArgument` when the state is over
   * `persist.maxBytes` or not msgpack.
   */
  save(): Promise<void>;
}

/**
 * Why an activation ends (`onDeactivate(ctx, reason)`): `destroyed` by `destroy(ref)`, `shutdown` when
 * the runtime closes, `takenOver` when another node took the object while this one's lease lapsed,
 * `failed` when its creation did not complete, `relocated` on the node it moved away from (it goes on,
 * with its state, on the new owner), `passivated` when a persistent object sat idle for its class's
 * `persist.idleMs` (its state saved; a get-or-create brings it back).
 */
export type DeactivationReason =
  'destroyed' | 'shutdown' | 'takenOver' | 'failed' | 'relocated' | 'passivated';

/**
 * How the object runtime builds an instance per activation and calls its methods: the Nest module
 * gives one that resolves the class through DI and runs handlers through Nest's pipeline; without
 * Nest the runtime uses `plainObjectInstances` (`new`, a direct method call).
 */
export interface ObjectInstances {
  /** One new instance of `cls` for one activation. May reject: the creation then fails and is undone. */
  create(cls: ObjectClassDescription): Promise<object>;
  /** The function that runs handler `method` of `instance` (built once per activation and method). */
  handler(instance: object, cls: ObjectClassDescription, method: string): HandlerFn;
}

/** `new` of the class token with no arguments; handlers called as plain methods. */
export const plainObjectInstances: ObjectInstances = {
  create: (cls) => {
    const Class = cls.token as new () => object;
    return Promise.resolve(new Class());
  },
  handler: (instance, _cls, method) => {
    const fn = (instance as Record<string, (payload: unknown, context: object) => unknown>)[method];
    return (payload, context) => fn.call(instance, payload, context);
  },
};

/** An end-user session as a bound Actor sees it: which one, and which node owns its connection. */
export interface ZLinkSessionRef {
  readonly id: string;
  readonly listener: string;
  /** The NodeRid of the Session owner (the node that holds the connection). */
  readonly ownerRid: string;
}

/**
 * `ctx.sessions` on an Actor: the sessions bound to it now (empty on a Spot, and on an Actor no session
 * bound). Bindings move with the Actor when it relocates; a new incarnation under the same id starts
 * with none.
 */
export interface ZLinkBoundSessions {
  readonly size: number;
  list(): readonly ZLinkSessionRef[];
  /**
   * Sends a Push (`msg` as msgpack) to every bound session's client over the binding's stored route (no
   * store read); returns how many sessions it was sent to. A session that has ended meanwhile drops it.
   * On a Spot: one record per Session owner for all its members' sessions, each session once.
   */
  push(packet: string, msg: unknown): number;
}
