import type { ObjectTypeMetrics, ZLinkEvents } from '../../core/observe/index.js';
import type { HandlerFn, ScopeTables } from '../../core/calls/index.js';
import type { AuthorityRecord, NodeRun, ObjectKey, StoreVersion } from '../../core/ports/index.js';
import type {
  ObjectClassRegistry,
  ObjectHandlerDescription,
  ObjectClassDescription,
  ObjectInstances,
  ObjectLifecycleHook,
  ObjectRef,
  SubscriptionTable,
  ZLinkObjectScope,
  ZLinkSpotPublishCall,
} from '../../core/objects/index.js';
import type { ObjectRouteFences, SpotEventSource } from '../wire/index.js';
import { EventOrder } from './event-order.js';
import { ObjectTurns } from '../execution/index.js';
import { type DurableState, ObjectStateHandle } from '../durable/index.js';
import { ObjectMembership } from './activation-membership.js';
import { type BindingPusher, ObjectSessions } from './activation-sessions.js';
import { type MemberSessions, type RoomPusher, SpotSessions } from './spot-sessions.js';
import type { InboundObjectCall, ObjectAnswer } from './object-call.js';

/** How an object's `ctx.publish` reaches Logical Multicast (`SpotMulticast` is one). */
export interface ObjectPublisher {
  /**
   * A publish of `event` as `packet` on (`channel`, `topic`, default `packet`) with object `from` as
   * its source. Throws `InvalidArgument` at once for a bad channel or topic; the rest is `.async()`.
   */
  call(
    from: SpotEventSource,
    channel: string,
    packet: string,
    event: unknown,
    options?: { topic?: string },
  ): ZLinkSpotPublishCall;
}

/** `creating` until the Ready write lands, `ready` while it takes messages, `closing` from release on. */
export type ActivationState = 'creating' | 'ready' | 'closing';

/** The authority an activation holds its object under: what an admitted route must carry. */
export interface HeldAuthority {
  readonly objectGeneration: number;
  readonly authorityOwnerGeneration: number;
  readonly ownerLeaseGeneration: number;
  /** The version of the record as this owner last wrote it (the next CAS expects it). */
  readonly storeVersion: StoreVersion;
}

/** The route `a` is held on here: this run as owner, the generations of its authority. */
export function heldRoute(a: Activation, self: NodeRun): ObjectRouteFences {
  const { objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration } = a.authority;
  return { owner: self, objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration };
}

/** A frozen ref of one incarnation. */
export function objectRef(key: ObjectKey, type: string, objectGeneration: number, owner: string): ObjectRef {
  return Object.freeze({ kind: key.kind, type, id: key.id, objectGeneration, mesh: key.mesh, rid: owner });
}

/**
 * One live object on its owner: the instance built for this incarnation, its turn queue and timers,
 * the authority it holds, and its handlers bound once per method (the adapter's pipeline is built on
 * first use, not per message).
 */
export class Activation {
  state: ActivationState = 'creating';
  /**
   * Set while the object is moving away (sealed for relocation): a call admitted on its route goes
   * here, in arrival order, instead of to its turns (the move's ingress hold), and its answer with it.
   */
  ingress: ((call: InboundObjectCall, answer: ObjectAnswer) => void) | undefined = undefined;
  /**
   * Set when this node's lease came back while the object was moving (the ownership check skipped it):
   * before it runs here again, its move reads the record and lets it go if another node holds it.
   */
  revalidate = false;
  readonly ref: ObjectRef;
  /** Its Spot (an Actor) or its members (a Spot); changed only in its own turns. */
  readonly membership = new ObjectMembership();
  /** An Actor's bound sessions (undefined on a Spot); changed only in its own turns. */
  readonly sessions: ObjectSessions | undefined;
  readonly scope: ZLinkObjectScope;
  private readonly bound = new Map<string, HandlerFn>();
  /** The class's handlers by message kind and packet (read once per message). */
  readonly handlers: ScopeTables<ObjectHandlerDescription> | undefined;
  /** A Spot class's Logical Multicast subscriptions by channel and topic (read once per event). */
  readonly subscriptions: SubscriptionTable | undefined;
  /** With subscriptions: the last event it ran from each publisher (see `EventOrder`); it moves with it. */
  readonly eventOrder: EventOrder | undefined;
  /** `ctx.state`, and the durable state of a persistent class once it was restored (`persistWith`). */
  readonly saved: ObjectStateHandle;

  constructor(
    readonly key: ObjectKey,
    readonly cls: ObjectClassDescription,
    readonly instance: object,
    readonly turns: ObjectTurns,
    public authority: HeldAuthority,
    private readonly instances: ObjectInstances,
    owner: NodeRun,
    classes: ObjectClassRegistry,
    /** The counters of its type, taken once. */
    readonly metrics: ObjectTypeMetrics,
    pusher: BindingPusher | undefined,
    publisher: ObjectPublisher,
    /** A Spot's way to its members' sessions (`SpotSessions`). */
    room: { readonly pusher: RoomPusher | undefined; readonly members: MemberSessions },
  ) {
    this.saved = new ObjectStateHandle(turns, () => this.hook('capture'), `${key.kind} '${key.id}'`);
    // An every-turn persistent object's pushes wait, as its replies do, for the state they may show (no
    // closure is made for a push that does not wait).
    const saved = this.saved;
    const heldPusher: BindingPusher | undefined = pusher && {
      push: (b, actorId, packet, payload) => {
        if (!saved.holding) return pusher.push(b, actorId, packet, payload);
        saved.hold(() => pusher.push(b, actorId, packet, payload));
        return true;
      },
      ended: (b, actorId) => pusher.ended(b, actorId),
    };
    const rooms = room.pusher;
    const roomPusher: RoomPusher | undefined = rooms && {
      pushRoom: (owner, spotId, packet, payload, targets) => {
        if (!saved.holding) return rooms.pushRoom(owner, spotId, packet, payload, targets);
        saved.hold(() => rooms.pushRoom(owner, spotId, packet, payload, targets));
        return true;
      },
    };
    this.sessions = key.kind === 'actor' ? new ObjectSessions(key.id, heldPusher) : undefined;
    this.handlers = classes.handlersOf(key.kind, cls.type);
    this.subscriptions = classes.subscriptionsOf(key.kind, cls.type);
    this.eventOrder = this.subscriptions && new EventOrder();
    const from: SpotEventSource = { kind: key.kind, id: key.id };
    this.ref = objectRef(key, cls.type, authority.objectGeneration, owner.rid);
    this.scope = Object.freeze({
      target: key.kind,
      type: cls.type,
      id: key.id,
      objectGeneration: authority.objectGeneration,
      self: this.ref,
      timers: turns.timers,
      membership: this.membership,
      sessions: this.sessions ?? new SpotSessions(key.id, this.membership, room.members, roomPusher),
      state: this.saved,
      publish: (channel: string, packet: string, event: unknown, options?: { topic?: string }) =>
        publisher.call(from, channel, packet, event, options),
    });
  }

  /**
   * Whether a call on route `fences` may be admitted here (docs/protocol.md#resolving-a-global-id, step 5):
   * this run is the owner, and the owner generations the route carries are the ones held. ObjectGeneration is
   * not compared (docs/protocol.md#where-objectgeneration-counts): a re-created object under the same owner
   * processes a message for its id.
   *
   * While `creating`, a route of this very incarnation is admitted too, and queues behind
   * `onActivate`: the store answers the Ready write and other processes' reads at once, so a caller
   * that read the fresh record can arrive before the write's answer does. Its route proves the write
   * landed: only a Ready record routes (the resolver and the cache never route to one being built),
   * and only this claim's record carries its ObjectGeneration. Should the creation still be undone,
   * the call ends `Unavailable` with the other waiting turns.
   */
  admits(self: NodeRun, fences: ObjectRouteFences): boolean {
    if (this.state === 'closing' || !this.heldOn(self, fences)) return false;
    return this.state === 'ready' || fences.objectGeneration === this.authority.objectGeneration;
  }

  /**
   * Whether `fences` name the route this activation is held on by run `self` (or, still arriving by a
   * move, will be held on once it opens here): this run, and the owner generations held.
   */
  heldOn(self: NodeRun, fences: ObjectRouteFences): boolean {
    return (
      fences.owner.rid === self.rid &&
      fences.owner.nodeGeneration === self.nodeGeneration &&
      fences.authorityOwnerGeneration === this.authority.authorityOwnerGeneration &&
      fences.ownerLeaseGeneration === this.authority.ownerLeaseGeneration
    );
  }

  /** Whether `record`, as the store has it now, is still this incarnation's, owned by run `self`. */
  heldIn(record: AuthorityRecord | undefined, self: NodeRun): boolean {
    return (
      record !== undefined &&
      record.owner.rid === self.rid &&
      record.owner.nodeGeneration === self.nodeGeneration &&
      record.objectGeneration === this.authority.objectGeneration &&
      record.authorityOwnerGeneration === this.authority.authorityOwnerGeneration
    );
  }

  /** A persistent class's durable state, or `undefined`. */
  get durable(): DurableState | undefined {
    return this.saved.durable;
  }

  /**
   * Makes this activation write its state through `d` from now on (restored, or arrived by a move): in
   * mode `everyTurn` every turn ends with a capture.
   */
  persistWith(d: DurableState): void {
    this.saved.durable = d;
    if (d.mode === 'everyTurn') this.turns.boundary = this.saved.boundary;
    const instance = this.instance as Record<string, unknown>;
    // A durable timer comes back as a call of the method its label names: the callback cannot be saved.
    this.turns.durableTimers = (label) =>
      label === undefined || label === ''
        ? 'a durable timer needs a label naming the method it runs'
        : typeof instance[label] === 'function'
          ? undefined
          : `its label '${label}' names no method of ${this.cls.kind} type '${this.cls.type}'`;
  }

  /** The function running `method` of this incarnation's instance. */
  handler(method: string): HandlerFn {
    let fn = this.bound.get(method);
    if (fn === undefined) {
      fn = this.instances.handler(this.instance, this.cls, method);
      this.bound.set(method, fn);
    }
    return fn;
  }

  /**
   * Calls a lifecycle method the class has (`onActivate`, `onDeactivate`, `capture`, `restore`, ...), with
   * `args`.
   */
  hook(name: ObjectLifecycleHook, ...args: unknown[]): unknown {
    if (!this.cls.hooks[name]) return undefined;
    const fn = (this.instance as Record<string, (...a: unknown[]) => unknown>)[name];
    return fn.apply(this.instance, args);
  }
}

/** The `object` event of one activation: it began taking messages, ended, or failed to be created. */
export function emitObjectEvent(
  events: ZLinkEvents,
  key: ObjectKey,
  objectType: string,
  state: 'activated' | 'deactivated' | 'failed',
  objectGeneration: number,
  reason: string | undefined,
): void {
  events.emit({
    type: 'object',
    state,
    mesh: key.mesh,
    objectKind: key.kind,
    objectType,
    id: key.id,
    objectGeneration,
    ...(reason !== undefined && { reason }),
  });
}
