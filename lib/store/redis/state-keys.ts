import type { ObjectKey } from '../../core/ports/index.js';

/** Names are URI-encoded inside keys: a `{`, `}` or `:` in a MeshName or id must not change the layout. */
const enc = encodeURIComponent;

/**
 * The key of one State Store row under `prefix`: `<prefix>:<mesh>:<kind>:<id>`, a hash (see
 * `state-scripts.ts`). One key per row and no hash tag: each script touches one key, so the rows of
 * a mesh spread over every shard of a Cluster instead of sitting on one (the object stores' slot per
 * mesh is for their indexes, which a State Store has none of). Encoding leaves no `{` or `}` in a
 * mesh or id, and the prefix has none either (the option refuses one), so no part of a key can turn
 * into a hash tag that would pile rows onto one slot.
 */
export function stateRowKey(prefix: string, key: ObjectKey): string {
  return `${prefix}:${enc(key.mesh)}:${key.kind}:${enc(key.id)}`;
}
