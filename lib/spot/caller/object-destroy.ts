import { ZLinkError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type {
  AuthorityRecord,
  AuthorityStore,
  NodeRun,
  ObjectKey,
  Versioned,
} from '../../core/ports/index.js';
import type { ObjectRef } from '../../core/objects/index.js';
import { controlObject, type ObjectControlDeps } from './object-control.js';
import { type OwnerLiveness, type RouteCache, confirmedLive } from '../resolve/index.js';

import { type ObjectHost, staleRef } from '../owner/index.js';

/**
 * The authority record of `key`, read once and counted (`count`, under `type`, else the record's own
 * type): `NotFound` when there is none, `Unavailable` (`details.resolver: 'StoreFailure'`) when the
 * store did not answer.
 */
export async function readAuthority(
  store: AuthorityStore,
  key: ObjectKey,
  type: string | undefined,
  what: string,
  count: (kind: ObjectKind, type: string) => void,
): Promise<Versioned<AuthorityRecord>> {
  const stored = await store.get(key).catch((error: unknown) => {
    throw new ZLinkError('Unavailable', `${what}: the Authority Store did not answer`, {
      cause: error,
      details: { resolver: 'StoreFailure' },
    });
  });
  if (type !== undefined) count(key.kind, type);
  if (stored === undefined) throw new ZLinkError('NotFound', `${what}: no such ${key.kind}`);
  if (type === undefined) count(key.kind, stored.record.type);
  return stored;
}

/** What `destroyObject` works with. */
export interface DestroyDeps extends OwnerLiveness {
  readonly mesh: string;
  readonly self: NodeRun;
  readonly store: AuthorityStore;
  readonly host: ObjectHost | undefined;
  readonly control: ObjectControlDeps;
  readonly cache: RouteCache;
  read(key: ObjectKey, type: string | undefined, what: string): Promise<Versioned<AuthorityRecord>>;
}

/**
 * Destroys the incarnation `ref` names, on its owner, after one store read to find the owner:
 * `NotFound` when the id has no record, `InvalidOperation` when it is another incarnation. An
 * authority whose owner's lease is gone is deleted here (nobody holds it). Resolves once the record
 * is gone: a later call finds it Missing.
 */
export async function destroyObject(deps: DestroyDeps, ref: ObjectRef, timeoutMs: number): Promise<void> {
  const what = `destroy ${ref.kind} '${ref.id}'`;
  const key = { mesh: deps.mesh, kind: ref.kind, id: ref.id };
  const stored = await deps.read(key, ref.type, what);
  const { record } = stored;
  if (record.objectGeneration !== ref.objectGeneration)
    throw staleRef(what, ref.objectGeneration, record.objectGeneration);
  const { self } = deps;
  const host = deps.host;
  const ownRun = record.owner.rid === self.rid && record.owner.nodeGeneration === self.nodeGeneration;
  if (ownRun && host) {
    await host.destroy(ref);
  } else if (!ownRun && !confirmedLive(record.owner, deps)) {
    // Not confirmed live here (its lease or its link is not): the store removes it only if the
    // owner's lease is really gone there (a stale view never deletes a live owner's object).
    const gone = await deps.store.takeOver(key, stored.version, undefined, record.owner);
    if (!gone.ok && gone.ownerAlive)
      await controlObject(deps.control, record.owner.rid, 'destroy', ref, undefined, timeoutMs, what);
    else if (!gone.ok)
      throw new ZLinkError('Unavailable', `${what}: the record changed while it was being removed`);
  } else {
    await controlObject(deps.control, record.owner.rid, 'destroy', ref, undefined, timeoutMs, what);
  }
  deps.cache.observeVersion(ref.kind, ref.id, stored.version + 1);
}
