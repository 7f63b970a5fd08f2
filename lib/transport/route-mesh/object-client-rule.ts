import type { MeshNodeState } from '../../core/wire/index.js';

/**
 * Two Object Clients with no Server membership have nothing to say to each other: each only calls
 * objects, which live on object servers (docs/objects.md#object-clients-do-not-peer).
 */
export function clientPair(
  own: Pick<MeshNodeState, 'objectRole' | 'memberships'>,
  other: Pick<MeshNodeState, 'objectRole' | 'memberships'>,
): boolean {
  return (
    own.objectRole === 'client' &&
    other.objectRole === 'client' &&
    own.memberships.length === 0 &&
    other.memberships.length === 0
  );
}

/** The rule, as a refusal says it to whoever configured the pair. */
export function objectClientsRule(rid: string): string {
  return (
    `object clients do not peer with each other: node '${rid}' and this node both have objectRole ` +
    `'client' and no Server membership, so nothing would flow between them. List only object servers ` +
    `(objectRole 'server') or nodes with Server memberships in peers, or use objectRole 'server' on a ` +
    `node that is to host objects`
  );
}
