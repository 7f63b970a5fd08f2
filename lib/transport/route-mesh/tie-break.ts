import { compareIds } from '../../core/calls/index.js';

/**
 * One logical link per pair of MeshNodes: when both connected to each other, the link initiated by the
 * smaller NodeRid is kept (unsigned byte-wise compare, a proper prefix sorts first —
 * docs/protocol.md#mesh-join), so both nodes pick the same one without asking each other.
 *
 * Whether the link `initiator` opened toward `acceptor` replaces the route the pair already has.
 * Equal NodeRids never get here (a node refuses itself as a peer); if they did, neither new link
 * would win and the current route would stay.
 */
export function initiatorWins(initiator: Uint8Array, acceptor: Uint8Array): boolean {
  return compareIds(initiator, acceptor) < 0;
}
