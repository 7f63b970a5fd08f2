import { invalidArgument, runtimeMs } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { NodeRun, ObjectKey } from '../../core/ports/index.js';
import { MAX_FOLLOW_HOPS } from '../../core/options/index.js';
import { type ObjectAddress, type ObjectRouteFences, wireAddress } from '../wire/index.js';
import type { Clock } from '../resolve/index.js';

/**
 * Message Follow on the source of a committed move (docs/protocol.md#message-follow): for a while after an
 * object left this node, a message that still reaches it on the old route is relayed to the new owner
 * instead of failing. This table holds the committed routes and decides, for one arriving message,
 * whether it is relayed and where — from memory only: it never reads a store and never runs a handler.
 */

/** One committed move away from this node, as Message Follow relays along it. */
export interface FollowRoute {
  readonly key: ObjectKey;
  /** The incarnation that moved: a message for another one is not this route's (`InvalidOperation`). */
  readonly objectGeneration: number;
  /**
   * The route a message must carry to be relayed: this run as owner, the generations it held the object
   * under.
   */
  readonly source: ObjectRouteFences;
  /**
   * Where it now lives: the new owner and the fences its admission checks; a relayed message carries these.
   */
  readonly target: ObjectRouteFences;
  /** `target` as a relayed record writes it, encoded once for the route's every relay. */
  readonly address: ObjectAddress;
  /** Until when, by the table's clock, it relays: the follow duration in force when it was installed. */
  readonly until: number;
}

/**
 * Where the messageFollow notice to one sender stands for one route (docs/protocol.md#message-follow: the
 * duplicate-suppression registry): `inFlight` while a notice is being sent (no second one starts), `sent`
 * once one went out (none again while the route lasts), back to absent when a send failed (the next relay may
 * try again).
 */
export type NoticeState = 'inFlight' | 'sent';

/** A route with its notice registry: by sender run, for this route only (both fences in its key). */
interface HeldRoute extends FollowRoute {
  readonly notices: Map<string, NoticeState>;
}

/** Why a message that reached an old route is not relayed. */
export type FollowRefusal =
  /** No move of this object from this route was committed here, or Message Follow is off. */
  | 'noFollowRoute'
  /** The route's follow duration has passed. */
  | 'followExpired'
  /** The message already took `MAX_FOLLOW_HOPS` hops: one more would be the ninth. */
  | 'followHops'
  /** The message names another incarnation than the one that moved (`InvalidOperation`). */
  | 'generationMismatch';

export type FollowDecision =
  | {
      readonly tag: 'relay';
      readonly route: FollowRoute;
      /** Hops the message will have taken once relayed (1 for a message sent straight to the old owner). */
      readonly hops: number;
    }
  | {
      readonly tag: 'refuse';
      /** `Unavailable` for every refusal but a generation mismatch, which is `InvalidOperation`. */
      readonly code: 'Unavailable' | 'InvalidOperation';
      readonly reason: FollowRefusal;
    };

const runKey = (run: NodeRun): string => `${run.rid}\u0000${run.nodeGeneration}`;
const sameRun = (a: NodeRun, b: NodeRun): boolean => a.rid === b.rid && a.nodeGeneration === b.nodeGeneration;

const checkDuration = (ms: number): number => runtimeMs('messageFollowDurationMs', ms);

/**
 * The committed Message Follow routes of one node, by object and by the authority owner generation the
 * object was held under here (a move away, a move back and a second move away are separate routes).
 * An expired route goes when it is next looked at, or at `sweep()`: the table runs no timer of its own.
 */
export class FollowRoutes {
  private durationMs: number;
  /** By kind, then id: a relay looks its route up by the id it read, no key string built. */
  private readonly routes: Record<ObjectKind, Map<string, HeldRoute[]>> = {
    spot: new Map(),
    actor: new Map(),
  };

  constructor(
    private readonly clock: Clock,
    durationMs: number,
  ) {
    this.durationMs = checkDuration(durationMs);
  }

  /** The follow duration new routes get, in ms (0: Message Follow is off and nothing is installed). */
  get followDurationMs(): number {
    return this.durationMs;
  }

  /**
   * Changes the duration of routes installed from now on; an installed route keeps its own
   * (docs/protocol.md#message-follow: a changed duration applies to later moves). Throws `InvalidArgument`
   * unless `ms` is an integer >= 0; the pairing with the route cache's max age (`cacheFollowProblem`) is the
   * caller's to check.
   */
  setDurationMs(ms: number): void {
    this.durationMs = checkDuration(ms);
  }

  /** No route is held: the one check a call pays while nothing has moved away from here. */
  get empty(): boolean {
    return this.routes.spot.size === 0 && this.routes.actor.size === 0;
  }

  /** Routes held now, expired ones not yet swept included. */
  get size(): number {
    let n = 0;
    for (const byId of [this.routes.spot, this.routes.actor])
      for (const list of byId.values()) n += list.length;
    return n;
  }

  /**
   * Installs the route of a move committed from `source` (this run's fences for the object) to `target`.
   * `undefined` when Message Follow is off (duration 0). Throws `InvalidArgument` unless the target's
   * authority owner generation is larger than the source's (docs/protocol.md#message-follow: the owner
   * generation grows with every hop, so no chain of routes can lead back into itself) and both name the same
   * incarnation.
   */
  install(key: ObjectKey, source: ObjectRouteFences, target: ObjectRouteFences): FollowRoute | undefined {
    if (target.authorityOwnerGeneration <= source.authorityOwnerGeneration)
      throw invalidArgument('target', 'the new owner must hold a larger authority owner generation');
    if (target.objectGeneration !== source.objectGeneration)
      throw invalidArgument('target', 'a move keeps the object generation');
    if (this.durationMs === 0) return undefined;
    // Each move adds one; the expired go here rather than wait for a call on their route.
    this.sweep();
    const route: HeldRoute = {
      key,
      objectGeneration: source.objectGeneration,
      source,
      target,
      address: wireAddress(key.kind, key.id, target),
      until: this.clock.now() + this.durationMs,
      notices: new Map(),
    };
    const byId = this.routes[key.kind];
    const list = (byId.get(key.id) ?? []).filter(
      (r) => r.source.authorityOwnerGeneration !== source.authorityOwnerGeneration,
    );
    list.push(route);
    byId.set(key.id, list);
    // Swept when it expires, so that `empty` (checked by every call to this node) turns true again
    // without waiting for a call on that very route.
    setTimeout(() => this.sweep(), this.durationMs + 1).unref();
    return route;
  }

  /**
   * What to do with a message for (`kind`, `id`) that reached this run on route `carried` after
   * `hops` relays already (0: its sender sent it here). Relay along the route its fences name while it
   * is in force and the hop bound allows; otherwise refuse with the code the call ends with. Reads no
   * store; an expired route found here goes.
   */
  decide(kind: ObjectKind, id: string, carried: ObjectRouteFences, hops: number): FollowDecision {
    const byId = this.routes[kind];
    const list = byId.get(id);
    let route: HeldRoute | undefined;
    // One route per move away from here: a list of one or two, looked at by index (no closure per relay).
    for (let i = 0; list !== undefined && i < list.length && route === undefined; i++) {
      const r = list[i] as HeldRoute;
      if (
        sameRun(r.source.owner, carried.owner) &&
        r.source.authorityOwnerGeneration === carried.authorityOwnerGeneration &&
        r.source.ownerLeaseGeneration === carried.ownerLeaseGeneration
      )
        route = r;
    }
    if (list === undefined || route === undefined) return refuse('Unavailable', 'noFollowRoute');
    if (this.clock.now() >= route.until) {
      this.remove(byId, id, list, route);
      return refuse('Unavailable', 'followExpired');
    }
    if (carried.objectGeneration !== route.objectGeneration)
      return refuse('InvalidOperation', 'generationMismatch');
    if (hops >= MAX_FOLLOW_HOPS) return refuse('Unavailable', 'followHops');
    return { tag: 'relay', route, hops: hops + 1 };
  }

  /** Drops every route whose duration has passed; returns how many went. */
  sweep(): number {
    const now = this.clock.now();
    let dropped = 0;
    for (const byId of [this.routes.spot, this.routes.actor])
      for (const [id, list] of byId) {
        const live = list.filter((r) => r.until > now);
        dropped += list.length - live.length;
        if (live.length === 0) byId.delete(id);
        else if (live.length !== list.length) byId.set(id, live);
      }
    return dropped;
  }

  /**
   * Whether to send the messageFollow notice to `sender` for a message just relayed on `route`: `true`
   * once per sender and route (the registry goes `inFlight`), `false` while one is in flight or after
   * one went out. Report the send with `noticeSent`. The registry lives and goes with its route: it
   * keys on both routes' every fence (a route of another move is another registry) and runs no timer.
   */
  claimNotice(route: FollowRoute, sender: NodeRun): boolean {
    const notices = (route as HeldRoute).notices;
    const k = runKey(sender);
    if (notices === undefined || notices.has(k)) return false;
    notices.set(k, 'inFlight');
    return true;
  }

  /** The notice `claimNotice` let through went out (`sent`), or failed: the next relay may try again. */
  noticeSent(route: FollowRoute, sender: NodeRun, ok: boolean): void {
    const notices = (route as HeldRoute).notices;
    const k = runKey(sender);
    if (notices?.get(k) !== 'inFlight') return;
    if (ok) notices.set(k, 'sent');
    else notices.delete(k);
  }

  /**
   * The registry's state for `sender` on `route` (`undefined`: no notice claimed, or the last one failed).
   */
  noticeState(route: FollowRoute, sender: NodeRun): NoticeState | undefined {
    return (route as HeldRoute).notices?.get(runKey(sender));
  }

  private remove(byId: Map<string, HeldRoute[]>, id: string, list: HeldRoute[], route: HeldRoute): void {
    const rest = list.filter((r) => r !== route);
    if (rest.length === 0) byId.delete(id);
    else byId.set(id, rest);
  }
}

function refuse(code: 'Unavailable' | 'InvalidOperation', reason: FollowRefusal): FollowDecision {
  return { tag: 'refuse', code, reason };
}
