import {
  type MeshMembership,
  type MeshNodeState,
  RecordKind,
  encodeMeshState,
} from '../../core/wire/index.js';
import type { NormalizedMesh } from '../../core/options/index.js';
import type { MeshIdentity } from './mesh-identity.js';

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

/**
 * The records that carry a node's state, each written from its state of the moment: the hello and the
 * welcome with what they prove (see `MeshIdentity`), and a later revision for the peers already ready.
 */
export interface MeshStateRecords {
  hello(endpoint: string): Uint8Array;
  welcome(rid: string): Uint8Array;
  state(): Uint8Array;
}

export function meshStateRecords(own: () => MeshNodeState, identity: MeshIdentity): MeshStateRecords {
  return {
    hello: (endpoint) => encodeMeshState(RecordKind.MeshHello, own(), identity.helloProof(endpoint)),
    welcome: (rid) => encodeMeshState(RecordKind.MeshWelcome, own(), identity.welcomeProof(rid)),
    state: () => encodeMeshState(RecordKind.MeshState, own()),
  };
}
