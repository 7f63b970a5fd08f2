import { ZLinkError } from '../errors.js';
import { isCount, isName } from '../wire/codec.js';
import { parseObjectKey } from './object-records.js';
import type { ObjectKey } from './object-stores.js';
import type { StateAdoptRequest, StateStore, StateWrite } from './state-store.js';

/*
 * What every State Store provider refuses before it sends anything (the port's `InvalidArgument`): the
 * checks live here once, so the memory, Redis and PostgreSQL providers refuse the same batches. A key
 * twice in one batch is refused because one statement cannot change a row twice (PostgreSQL's
 * `ON CONFLICT` refuses it) and the results would not say which row they answer.
 */

const isPositive = (v: unknown): v is number => isCount(v) && v >= 1;
const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length > 0;

/** A problem with one adopt request, as text, or `undefined`. */
function adoptProblem(r: StateAdoptRequest): string | undefined {
  if (!isName(r.type)) return 'type is not a non-empty string';
  if (!isPositive(r.objectGeneration)) return 'objectGeneration is not an integer >= 1';
  if (!isName(r.owner?.rid) || !isName(r.owner.nodeGeneration)) return 'owner is not a node run';
  if (r.force !== undefined && r.force !== true) return 'force is neither true nor absent';
  return undefined;
}

/** A problem with one write, as text, or `undefined`. */
function writeProblem(w: StateWrite): string | undefined {
  if (!isName(w.type)) return 'type is not a non-empty string';
  if (!isPositive(w.epoch)) return 'epoch is not an integer >= 1';
  if (!isCount(w.expected)) return 'expected is not an integer >= 0';
  if (!isPositive(w.schemaVersion)) return 'schemaVersion is not an integer >= 1';
  if (w.tombstone !== undefined && w.tombstone !== true) return 'tombstone is neither true nor absent';
  if (w.tombstone ? w.state !== undefined : !isBytes(w.state))
    return w.tombstone ? 'a tombstone carries state' : 'state is not a non-empty Uint8Array';
  if (w.timers !== undefined && (w.tombstone || !isBytes(w.timers)))
    return w.tombstone ? 'a tombstone carries timers' : 'timers is not a non-empty Uint8Array';
  const a = w.authority;
  if (!isPositive(a?.objectGeneration) || !isCount(a.authorityOwnerGeneration) || !isName(a.rid))
    return 'authority is not { objectGeneration, authorityOwnerGeneration, rid }';
  return undefined;
}

function checkBatch<R extends { readonly key: ObjectKey }>(
  store: StateStore,
  op: 'adopt' | 'write',
  batch: readonly R[],
  problemOf: (row: R) => string | undefined,
): void {
  const refuse = (what: string) =>
    new ZLinkError('InvalidArgument', `${store.name}: ${op} refused, nothing done: ${what}`);
  if (!Array.isArray(batch)) throw refuse('the batch is not an array');
  if (batch.length > store.batchLimit)
    throw refuse(`${batch.length} rows, more than its batchLimit ${store.batchLimit}`);
  const seen = new Set<string>();
  batch.forEach((row, i) => {
    const key = parseObjectKey(row?.key);
    if (key === undefined) throw refuse(`row ${i}: key is not { mesh, kind: 'spot' | 'actor', id }`);
    const name = JSON.stringify([key.mesh, key.kind, key.id]);
    if (seen.has(name))
      throw refuse(`row ${i}: ${key.kind} '${key.id}' of mesh '${key.mesh}' twice in one batch`);
    seen.add(name);
    const problem = problemOf(row);
    if (problem !== undefined) throw refuse(`row ${i} (${key.kind} '${key.id}'): ${problem}`);
  });
}

/** Throws the port's `InvalidArgument` for an adopt batch `store` must refuse whole. */
export function checkAdoptBatch(store: StateStore, batch: readonly StateAdoptRequest[]): void {
  checkBatch(store, 'adopt', batch, adoptProblem);
}

/** Throws the port's `InvalidArgument` for a write batch `store` must refuse whole. */
export function checkWriteBatch(store: StateStore, batch: readonly StateWrite[]): void {
  checkBatch(store, 'write', batch, writeProblem);
}
