import { isCount, isName, isStr } from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';

/**
 * What a call to an object was sent with: the owner run and the authority fences
 * (docs/protocol.md#resolving-a-global-id).
 */
export interface ObjectRouteFences {
  readonly owner: NodeRun;
  readonly objectGeneration: number;
  readonly authorityOwnerGeneration: number;
  readonly ownerLeaseGeneration: number;
}

/** The fences as the nested array every object record carries them in. */
export function writeObjectFences(f: ObjectRouteFences): unknown[] {
  return [
    f.owner.rid,
    f.owner.nodeGeneration,
    f.objectGeneration,
    f.authorityOwnerGeneration,
    f.ownerLeaseGeneration,
  ];
}

/** The fences of a record, `undefined` when the array is not five well-typed items (or more). */
export function readObjectFences(v: unknown): ObjectRouteFences | undefined {
  if (!Array.isArray(v) || v.length < 5) return undefined;
  const [rid, nodeGeneration, objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration] =
    v as unknown[];
  if (
    !isName(rid) ||
    !isStr(nodeGeneration) ||
    !isCount(objectGeneration) ||
    !isCount(authorityOwnerGeneration) ||
    !isCount(ownerLeaseGeneration)
  ) {
    return undefined;
  }
  return { owner: { rid, nodeGeneration }, objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration };
}
