import type { MeshMembership, MeshNodeState, NormalizedMesh } from '../../core/index.js';

/**
 * What a MeshNode announces when it starts (revision 1): its Server memberships at their configured
 * weights, none draining, and the object types it hosts — written only when there are some, so a
 * node without objects sends the same bytes as one of a version before them.
 */
export function initialMeshState(
  mesh: NormalizedMesh,
  rid: string,
  generation: string,
  objectTypes: readonly string[] | undefined,
): MeshNodeState {
  const memberships: MeshMembership[] = [];
  for (const c of mesh.channels.values()) {
    if (c.role === 'server') memberships.push({ channel: c.channel, weight: c.weight, draining: false });
  }
  const types = objectTypes?.length ? { objectTypes: [...objectTypes] } : {};
  return {
    mesh: mesh.mesh,
    rid,
    generation,
    objectRole: mesh.objectRole,
    memberships,
    revision: 1,
    ...types,
  };
}
