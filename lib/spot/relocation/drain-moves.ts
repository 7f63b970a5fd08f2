import { type Activation, type ObjectHost, within } from '../owner/index.js';
import type { Clock, Placement } from '../resolve/index.js';
import {
  DRAIN_ARRIVAL_POLL_MS,
  DRAIN_LEAVE_RESERVE_MS,
  DRAIN_MOVE_TRIES,
  RELAY_QUIET_MS,
} from '../timing/index.js';
import type { MoveRequest, RelocationResult } from './move-context.js';

/** Moves a drain runs at once: enough to empty a node quickly, few enough not to swamp its peers. */
const DRAIN_CONCURRENCY = 8;

/** What a drain works with: this node's host, clock and placement, and one move of an object held here. */
export interface DrainDeps {
  readonly host: ObjectHost;
  readonly clock: Clock;
  readonly placement: Placement;
  /** This node's NodeRid: never a target of its own moves. */
  readonly self: string;
  /** Moves one object held here (`Relocations.move`). */
  readonly move: (req: MoveRequest) => Promise<RelocationResult>;
  /** How many moves away from this node committed so far, drains or not (`Relocations.movedAway`). */
  readonly movedAway: () => number;
}

/**
 * A drain (docs/objects.md#rolling-restarts): no object moves here any more; with `relocate`, every
 * object that can move goes to the other object servers (`moveAll`, within the deadline less
 * `DRAIN_LEAVE_RESERVE_MS`), every peer drops its routes to this node (`leave`: the barrier), then this
 * node keeps relaying the calls that still come for them until none came for `RELAY_QUIET_MS`
 * (`lastRelayAt`: a flush keeping a sender's order comes after the barrier), all within `deadlineMs`.
 * A node no object ever moved away from needs neither barrier nor quiet: no peer holds a route to an
 * object that left it, and what is still here is released at close — so a lone object server (no
 * target for anything) drains at once, without waiting for its deadline.
 */
export async function drainNode(
  deps: DrainDeps,
  deadlineMs: number,
  relocate: boolean,
  lastRelayAt: () => number,
  leave: (timeoutMs: number) => Promise<void>,
): Promise<void> {
  deps.host.moves.draining = true;
  if (!relocate) return;
  const { clock } = deps;
  const end = clock.now() + deadlineMs;
  // A move waits for the running turn and, past its go, for the store: the moves end early enough to
  // leave the barrier and the quiet period their share of the deadline.
  const movesMs = deadlineMs - Math.min(DRAIN_LEAVE_RESERVE_MS, deadlineMs / 4);
  await within(moveAll(deps, movesMs), movesMs);
  if (deps.movedAway() === 0) return;
  // Every peer drops its routes to this node; what it sent before is here (and relayed) once it answered.
  await leave(Math.max(0, end - clock.now()));
  while (clock.now() < end && Date.now() - lastRelayAt() < RELAY_QUIET_MS)
    await new Promise((r) => setTimeout(r, 50));
}

/**
 * Moves every object here that can move to the other object servers, `concurrency` at a time, each
 * within what is left of `timeoutMs`; resolves with how many moved. It goes in rounds until nothing is
 * left to try: an object whose move did not commit (its target began draining, was lost, refused it)
 * is tried again on another server, `DRAIN_MOVE_TRIES` times in all, and an object that arrives by a
 * move begun before this node drained is waited for and moved on too. One that cannot move — no other
 * ready server hosts its type, its tries are spent, the time is up — stays, for the caller to release.
 */
export async function moveAll(
  deps: DrainDeps,
  timeoutMs: number,
  concurrency = DRAIN_CONCURRENCY,
): Promise<number> {
  const { clock, host } = deps;
  const deadline = clock.now() + timeoutMs;
  const tries = new Map<Activation, number>();
  let moved = 0;
  const round = async (queue: Activation[]): Promise<void> => {
    const worker = async (): Promise<void> => {
      for (let a = queue.shift(); a !== undefined; a = queue.shift()) {
        const left = deadline - clock.now();
        if (left <= 0) return;
        const tried = tries.get(a) ?? 0;
        tries.set(a, tried + 1);
        const result = await deps.move(drainMove(host, a, tried, left)).catch(() => undefined);
        if (result?.outcome === 'committed') moved++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };
  while (clock.now() < deadline) {
    const queue = drainQueue(deps, tries);
    if (queue.length > 0) await round(queue);
    else if (host.moves.anyArriving) await new Promise((r) => setTimeout(r, DRAIN_ARRIVAL_POLL_MS));
    else break;
  }
  return moved;
}

/**
 * What a drain moves next: the objects here that can move now, have tries left and a server to go to;
 * Spots first, and a member Actor whose Spot is among them goes with it (its Spot's move takes it).
 */
function drainQueue(deps: DrainDeps, tries: ReadonlyMap<Activation, number>): Activation[] {
  const movable = deps.host.moves
    .movable()
    .filter((a) => (tries.get(a) ?? 0) < DRAIN_MOVE_TRIES && hasTarget(deps, a));
  const withSpot = (a: Activation): boolean => {
    const spot = a.membership.spot;
    return spot !== undefined && movable.some((s) => s.key.kind === 'spot' && s.key.id === spot);
  };
  return [
    ...movable.filter((a) => a.key.kind === 'spot'),
    ...movable.filter((a) => a.key.kind === 'actor' && !withSpot(a)),
  ];
}

/** Whether another ready object server hosts the type of `a` (a draining one no longer announces it). */
function hasTarget(deps: DrainDeps, a: Activation): boolean {
  return deps.placement.servers(a.key.kind, a.cls.type).some((p) => p.rid !== deps.self);
}

/**
 * The move of `a` on its try `tried` (from 0), with `left` ms: placement picks the target. A member
 * apart from its Spot (left behind by a failed member move) first goes to its Spot's node
 * (`memberMove`); a member here whose Spot cannot move, and an apart one on a later try, goes on its
 * own: the Spot ends here and lets it go.
 */
function drainMove(host: ObjectHost, a: Activation, tried: number, left: number): MoveRequest {
  const spot = a.key.kind === 'actor' ? a.membership.spot : undefined;
  const apart = spot !== undefined && host.get('spot', spot) === undefined;
  return {
    kind: a.key.kind,
    id: a.key.id,
    objectGeneration: a.authority.objectGeneration,
    target: undefined,
    timeoutMs: left,
    forGroup: !apart || tried > 0,
  };
}
