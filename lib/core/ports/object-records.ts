import type {
  AuthorityRecord,
  AuthorityState,
  ObjectKey,
  RelocationEnd,
  RelocationRecord,
  RelocationState,
} from './object-stores.js';
import { isCount, isName } from '../wire/codec.js';

/*
 * Object-store records read back from a store are checked field by field, like `parseDescriptor`:
 * a store is shared, and another version or a hand edit may have written it. Each parser returns
 * exactly the fields it knows (an unknown extra field is dropped, not kept) or `undefined`.
 */

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const AUTHORITY_STATES: readonly AuthorityState[] = ['creating', 'ready', 'releasing'];
const RELOCATION_STATES: readonly RelocationState[] = ['preparing', 'committed', 'aborted'];

/** A key the object stores accept: non-empty mesh and id, kind `spot` or `actor`. */
export function parseObjectKey(value: unknown): ObjectKey | undefined {
  if (!isObject(value)) return undefined;
  const { mesh, kind, id } = value;
  if (!isName(mesh) || !isName(id) || (kind !== 'spot' && kind !== 'actor')) return undefined;
  return { mesh, kind, id };
}

export function parseAuthorityRecord(value: unknown): AuthorityRecord | undefined {
  if (!isObject(value)) return undefined;
  const { type, state, owner, objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration } = value;
  if (!isName(type) || !AUTHORITY_STATES.includes(state as AuthorityState)) return undefined;
  if (!isObject(owner) || !isName(owner.rid) || !isName(owner.nodeGeneration)) return undefined;
  if (!isCount(objectGeneration) || !isCount(authorityOwnerGeneration) || !isCount(ownerLeaseGeneration))
    return undefined;
  return {
    type,
    state: state as AuthorityState,
    owner: { rid: owner.rid, nodeGeneration: owner.nodeGeneration },
    objectGeneration,
    authorityOwnerGeneration,
    ownerLeaseGeneration,
  };
}

function parseRelocationEnd(value: unknown): RelocationEnd | undefined {
  if (!isObject(value)) return undefined;
  const { rid, nodeGeneration, authorityOwnerGeneration, ownerLeaseGeneration } = value;
  if (!isName(rid) || !isName(nodeGeneration)) return undefined;
  if (!isCount(authorityOwnerGeneration) || !isCount(ownerLeaseGeneration)) return undefined;
  return { rid, nodeGeneration, authorityOwnerGeneration, ownerLeaseGeneration };
}

export function parseRelocationRecord(value: unknown): RelocationRecord | undefined {
  if (!isObject(value)) return undefined;
  const { relocationId, type, state, objectGeneration, followMs } = value;
  if (!isName(relocationId) || !isName(type)) return undefined;
  if (!RELOCATION_STATES.includes(state as RelocationState)) return undefined;
  if (!isCount(objectGeneration) || !isCount(followMs)) return undefined;
  const source = parseRelocationEnd(value.source);
  const target = parseRelocationEnd(value.target);
  if (!source || !target) return undefined;
  return { relocationId, type, state: state as RelocationState, objectGeneration, source, target, followMs };
}
