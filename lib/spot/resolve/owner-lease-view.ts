import type { MeshLink, NodeRun } from '../../core/ports/index.js';

/**
 * The owner lease as the caller side sees it (docs/architecture.md#stores-and-authority: the owner lease is
 * the owner node's own lease; docs/protocol.md#owner-lease-and-fencing). The runtime implements it from the
 * Location Store's MeshNode descriptors it has read: a run holds a lease while a descriptor of that NodeRid
 * *and* that node generation is live. Answers from memory, synchronously: it never reads the store.
 */
export interface OwnerLeaseView {
  /**
   * Until when, by the same `Clock` the resolver and route cache use, node run `owner` may admit
   * object work under its current lease (the lease's local admission deadline); `undefined` when it
   * holds none: no descriptor of that NodeRid, only one of another generation, or one that lapsed.
   * A deadline may grow as the owner refreshes its lease; it is never a promise that the owner is
   * still alive, only that it may still admit.
   */
  admissionDeadline(owner: NodeRun): number | undefined;
}

/** Time in ms for the object layer's deadlines; injected so tests can move it. */
export interface Clock {
  now(): number;
}

/** The process's wall clock (the clock the runtime's lease view will report deadlines on). */
export const SYSTEM_CLOCK: Clock = { now: () => Date.now() };

/** What tells whether another node's run is live without asking the store (`confirmedLive`). */
export interface OwnerLiveness {
  readonly leases: OwnerLeaseView;
  readonly clock: Clock;
  /** The mesh link: an owner is confirmed live only while its link is ready too. */
  readonly link: Pick<MeshLink, 'isReady'>;
}

/**
 * Whether another node's run `owner` is confirmed live here without asking the store: its lease is
 * live in this node's view *and* its mesh link is ready. Either alone can be stale: the view lasts
 * until the next descriptor read (up to `fullReadIntervalMs` after the lease lapsed in the store), and
 * a link to a paused process stays ready until its silence is judged. A killed owner's link goes
 * first, so the two together fail within moments of a crash; what is not confirmed is asked of the
 * store, atomically with the write that would take it over (`AuthorityStore.takeOver`).
 */
export function confirmedLive(owner: NodeRun, { leases, clock, link }: OwnerLiveness): boolean {
  const until = leases.admissionDeadline(owner);
  return until !== undefined && until > clock.now() && link.isReady(owner.rid, owner.nodeGeneration);
}
