import type { AuthorityRecord, NodeRun, ObjectKey, StoreVersion, Versioned } from '../../core/ports/index.js';
import type { ObjectAddress } from '../wire/index.js';

/*
 * The resolver's four closed results (docs/protocol.md#resolver-results: one closed result per state, so no
 * later stage has to guess which state a lookup found). Each goes to exactly one receiver: `ReadyRoute` to
 * the route cache and route admission, `Missing` to the creation coordinator, `Unavailable` to the terminal
 * completion mapper, `StoreFailure` to a retry until the call's deadline (issue 16 item 3).
 */

/**
 * The fences a call to an object carries and its owner checks on admission (docs/protocol.md#the-route-cache:
 * the owner route and its fences are kept together). Also what
 * a stale-route answer names, so it drops only the entry it was about.
 */
export interface RouteFences {
  /** The owner's NodeRid and the node generation of the run that holds the object. */
  readonly owner: NodeRun;
  readonly objectGeneration: number;
  readonly authorityOwnerGeneration: number;
  readonly ownerLeaseGeneration: number;
  /**
   * The authority record's version the route was read at. Optional for a matcher (a relay notice
   * names fences only, docs/protocol.md#message-follow); when given it must match too.
   */
  readonly storeVersion?: StoreVersion;
}

/** A Ready authority whose owner holds a live lease: where to send, with what fences, until when. */
export interface ReadyRoute extends RouteFences {
  readonly tag: 'ReadyRoute';
  readonly key: ObjectKey;
  /** The Spot or Actor type the authority names. */
  readonly type: string;
  readonly storeVersion: StoreVersion;
  /**
   * The owner lease's local admission deadline when the route was made, by the resolver's clock: past it the
   * owner admits nothing under this lease, so the route is not used (docs/protocol.md#the-route-cache: how
   * long an entry lives). The route cache may hand out a copy with a later deadline after the lease was
   * refreshed; a route object itself never changes.
   */
  readonly admissionDeadline: number;
  /** Kind, id and these fences as every call on the route writes them: encoded once per route. */
  readonly address: ObjectAddress;
}

/** No authority record: never created, or its release has completed (docs/protocol.md#resolver-results). */
export interface Missing {
  readonly tag: 'Missing';
  readonly key: ObjectKey;
}

/**
 * Why a record that exists gives no route: its owner holds no live lease
 * (docs/architecture.md#stores-and-authority: an authority whose owner's lease is gone resolves Unavailable),
 * or it is not Ready — still being built or being released (docs/protocol.md#resolving-a-global-id: only a
 * Ready record is a route for an application message; docs/protocol.md#resolver-results: Missing only after
 * the release has completed).
 */
export type UnavailableReason = 'ownerLeaseGone' | 'creating' | 'releasing';

/** The authority remains but its owner cannot be used now (docs/protocol.md#resolver-results). */
export interface Unavailable {
  readonly tag: 'Unavailable';
  readonly key: ObjectKey;
  readonly reason: UnavailableReason;
  /** The record as read, so a later stage (an explicit takeover) need not read it again. */
  readonly authority: Versioned<AuthorityRecord>;
}

/**
 * The store could not tell whether an authority exists (docs/protocol.md#resolver-results): the read failed.
 */
export interface StoreFailure {
  readonly tag: 'StoreFailure';
  readonly key: ObjectKey;
  /** What the read rejected with: the store's own error, or `ProtocolError` for an unreadable record. */
  readonly error: unknown;
}

export type ResolveResult = ReadyRoute | Missing | Unavailable | StoreFailure;

/**
 * Whether `route` is the route `fences` name: same owner run and generations, and the same
 * StoreVersion when `fences` has one.
 */
export function fencesMatch(route: ReadyRoute, fences: RouteFences): boolean {
  return (
    route.owner.rid === fences.owner.rid &&
    route.owner.nodeGeneration === fences.owner.nodeGeneration &&
    route.objectGeneration === fences.objectGeneration &&
    route.authorityOwnerGeneration === fences.authorityOwnerGeneration &&
    route.ownerLeaseGeneration === fences.ownerLeaseGeneration &&
    (fences.storeVersion === undefined || route.storeVersion === fences.storeVersion)
  );
}
