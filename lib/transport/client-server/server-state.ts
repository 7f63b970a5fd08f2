import type { ServerDescriptor, ServerState } from '../../core/index.js';

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
