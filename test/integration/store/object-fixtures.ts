/** What the object-store suites share: sample records and a contract over either store. */
import type {
  AuthorityRecord,
  AuthorityStore,
  ObjectKey,
  RelocationRecord,
  RelocationStore,
  Versioned,
  VersionedStore,
} from '../../../lib/core/index.js';

export function authority(overrides: Partial<AuthorityRecord> = {}): AuthorityRecord {
  return {
    type: 'room',
    state: 'ready',
    owner: { rid: 'node-a', nodeGeneration: 'g1' },
    objectGeneration: 1,
    authorityOwnerGeneration: 1,
    ownerLeaseGeneration: 1,
    ...overrides,
  };
}

export function relocation(overrides: Partial<RelocationRecord> = {}): RelocationRecord {
  const end = (rid: string) => ({
    rid,
    nodeGeneration: 'g1',
    authorityOwnerGeneration: 1,
    ownerLeaseGeneration: 1,
  });
  return {
    relocationId: 'move-1',
    type: 'room',
    state: 'preparing',
    objectGeneration: 1,
    source: end('node-a'),
    target: end('node-b'),
    followMs: 30000,
    ...overrides,
  };
}

/**
 * One store kind under the shared contract: how to make a record owned by / listed under a NodeRid
 * (`variant` makes records that differ), and how the store lists by NodeRid.
 */
export interface ObjectStoreCase<R> {
  readonly name: string;
  readonly sample: (rid: string, variant?: number) => R;
  readonly list: (store: VersionedStore<R>, mesh: string, rid: string) => Promise<Versioned<R>[]>;
}

export const AUTHORITY_CASE: ObjectStoreCase<AuthorityRecord> = {
  name: 'AuthorityStore',
  sample: (rid, variant = 0) =>
    authority({ owner: { rid, nodeGeneration: 'g1' }, ownerLeaseGeneration: variant }),
  list: (store, mesh, rid) => (store as AuthorityStore).listByOwner(mesh, rid),
};

export const RELOCATION_CASE: ObjectStoreCase<RelocationRecord> = {
  name: 'RelocationStore',
  sample: (rid, variant = 0) => relocation({ source: { ...relocation().source, rid }, followMs: variant }),
  list: (store, mesh, rid) => (store as RelocationStore).listByNode(mesh, rid),
};

let keys = 0;
/** A key no other test uses. */
export function freshKey(overrides: Partial<ObjectKey> = {}): ObjectKey {
  return { mesh: 'game', kind: 'spot', id: `room-${++keys}`, ...overrides };
}
