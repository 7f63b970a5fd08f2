import { isStr } from './codec.js';
import type { NodeRun } from './object-stores.js';

/** What a call to an object was sent with: the owner run and the authority fences (spot-actor-routing §2.1 step 3). */
export interface ObjectRouteFences {
  readonly owner: NodeRun;
  readonly objectGeneration: number;
  readonly authorityOwnerGeneration: number;
  readonly ownerLeaseGeneration: number;
}

const isName = (v: unknown): v is string => isStr(v) && v.length > 0;
const isGeneration = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

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
    !isGeneration(objectGeneration) ||
    !isGeneration(authorityOwnerGeneration) ||
    !isGeneration(ownerLeaseGeneration)
  ) {
    return undefined;
  }
  return { owner: { rid, nodeGeneration }, objectGeneration, authorityOwnerGeneration, ownerLeaseGeneration };
}
