import type { ServerState } from '../../core/wire/index.js';
import type { ServerDescriptor } from '../../core/ports/index.js';

/**
 * The rules for what a client believes of a server's state: what its descriptor, its welcome and its
 * State records say, and which of them wins.
 */

/** A descriptor and a confirmed identity name the same run of the same server. */
export function sameIdentity(d: ServerDescriptor, s: ServerState): boolean {
  return d.rid === s.serverRid && d.generation === s.generation;
}

/** What a descriptor says, as the State record a server would send (applies only with a larger revision). */
export function descriptorState(d: ServerDescriptor): ServerState {
  return {
    channel: d.channel,
    serverRid: d.rid,
    generation: d.generation,
    weight: d.weight,
    draining: d.draining,
    revision: d.revision,
  };
}

/**
 * The state a welcome leaves. A welcome from the same generation never rolls state back
 * (docs/protocol.md#weights-and-drain-state).
 */
export function welcomedState(previous: ServerState | undefined, welcome: ServerState): ServerState {
  const rollsBack = previous?.generation === welcome.generation && welcome.revision < previous.revision;
  return rollsBack ? previous : welcome;
}

/**
 * Whether `next` (a State record, or a descriptor) replaces `current`. Only a larger revision within
 * the same lifecycle generation applies (docs/protocol.md#weights-and-drain-state).
 */
export function replacesState(current: ServerState | undefined, next: ServerState): boolean {
  return current !== undefined && next.generation === current.generation && next.revision > current.revision;
}

/** The fields of a server's state its events carry. */
export function stateFields(s: ServerState) {
  return { serverRid: s.serverRid, generation: s.generation, weight: s.weight, draining: s.draining };
}
