import { type Activation, type ObjectHost, within } from '../owner/index.js';
import type { Clock } from '../resolve/index.js';
import { RELAY_QUIET_MS } from '../timing/index.js';
import type { MoveRequest, RelocationResult } from './move-context.js';

/** Moves a drain runs at once: enough to empty a node quickly, few enough not to swamp its peers. */
const DRAIN_CONCURRENCY = 8;

/** What a drain works with: this node's host and clock, and one move of an object held here. */
export interface DrainDeps {
  readonly host: ObjectHost;
  readonly clock: Clock;
  /** Moves one object held here (`Relocations.move`). */
  readonly move: (req: MoveRequest) => Promise<RelocationResult>;
}

/**
 * A drain: no object moves here any more; with `relocate`, every object that can move goes to the
 * other object servers (`moveAll`), every peer drops its routes to this node (`leave`: the barrier),
 * then this node keeps relaying the calls that still come for them until none came for
 * `RELAY_QUIET_MS` (`lastRelayAt`: a flush keeping a sender's order comes after the barrier), all
 * within `deadlineMs`.
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
  // A move waits for the running turn and, past its go, for the store: the drain waits no longer than its
  // deadline.
  await within(moveAll(deps, deadlineMs), deadlineMs);
  // Every peer drops its routes to this node; what it sent before is here (and relayed) once it answered.
  await leave(Math.max(0, end - clock.now()));
  while (clock.now() < end && Date.now() - lastRelayAt() < RELAY_QUIET_MS)
    await new Promise((r) => setTimeout(r, 50));
}

/**
 * Moves every object here that can move to the other object servers, `concurrency` at a time,
 * each within what is left of `timeoutMs`; resolves with how many moved. One that cannot move
 * (aborted, refused, no server to take it) stays, for the caller to release.
 */
export async function moveAll(
  deps: DrainDeps,
  timeoutMs: number,
  concurrency = DRAIN_CONCURRENCY,
): Promise<number> {
  const deadline = deps.clock.now() + timeoutMs;
  const { host } = deps;
  const movable = host.moves.movable();
  // A member whose Spot is here and can move goes with it (its Spot's move takes it); Spots first.
  const withSpot = (a: Activation): boolean => {
    const spot = a.membership.spot;
    return spot !== undefined && movable.some((s) => s.key.kind === 'spot' && s.key.id === spot);
  };
  const queue = [
    ...movable.filter((a) => a.key.kind === 'spot'),
    ...movable.filter((a) => a.key.kind === 'actor' && !withSpot(a)),
  ];
  let moved = 0;
  const worker = async (): Promise<void> => {
    for (let a = queue.shift(); a !== undefined; a = queue.shift()) {
      const left = deadline - deps.clock.now();
      if (left <= 0) return;
      const { kind, id } = a.key;
      const result = await deps
        .move({
          kind,
          id,
          objectGeneration: a.authority.objectGeneration,
          target: undefined,
          timeoutMs: left,
          // A member here whose Spot cannot move goes on its own: the Spot ends here and lets it go.
          forGroup: true,
        })
        .catch(() => undefined);
      if (result?.outcome === 'committed') moved++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return moved;
}
