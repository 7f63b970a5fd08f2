import { ZLinkError } from '../../core/errors.js';
import type { AuthorityStore } from '../../core/ports/index.js';
import type { ObjectHost } from '../owner/index.js';
import type { MoveRequest } from './move-context.js';

/**
 * A member Actor moves only to where its Spot is (docs/objects.md#actors-in-spots): a Spot and its
 * members share a node, so the Spot's own move takes them and a member is never moved away alone
 * (before this rule it was, and the Spot it left behind listed a member that no longer ran beside it).
 *
 * Resolves with the request to run: unchanged for an Actor in no Spot (or not held here: the move
 * itself ends `NotFound`), or for a member apart from its Spot (left behind by a member move that
 * failed) asked to go to its Spot's node; an apart member asked with no `target` goes there. Rejects
 * `InvalidOperation` (`details.reason: 'member'`, `details.spot`) for a member whose Spot runs here,
 * or an apart member asked to go anywhere but its Spot's node; `Unavailable` when the store does not
 * answer where the Spot is. A member whose Spot has no record any more moves as asked (the Spot's end
 * lets it go).
 */
export async function memberMove(
  host: ObjectHost,
  store: AuthorityStore,
  mesh: string,
  req: MoveRequest,
): Promise<MoveRequest> {
  const spot = req.kind === 'actor' ? host.get('actor', req.id)?.membership.spot : undefined;
  if (spot === undefined) return req;
  const what = `relocate actor '${req.id}'`;
  const ways = `relocate spot '${spot}' instead (its members move with it), or take the actor out of it first (objects.leave)`;
  if (host.get('spot', spot) !== undefined)
    throw memberRefusal(
      `${what}: it is a member of spot '${spot}', and a Spot and its members share a node: ${ways}`,
      spot,
    );
  const stored = await store.get({ mesh, kind: 'spot', id: spot }).catch((error: unknown) => {
    throw new ZLinkError(
      'Unavailable',
      `${what}: the Authority Store did not say where its spot '${spot}' is`,
      {
        cause: error,
        details: { resolver: 'StoreFailure' },
      },
    );
  });
  if (stored === undefined) return req;
  const spotOwner = stored.record.owner.rid;
  if (req.target === undefined) return { ...req, target: spotOwner };
  if (req.target === spotOwner) return req;
  throw memberRefusal(
    `${what}: it is a member of spot '${spot}', which runs on '${spotOwner}': a member moves only to its ` +
      `Spot's node (target '${spotOwner}' brings it back beside it); else ${ways}`,
    spot,
  );
}

function memberRefusal(message: string, spot: string): ZLinkError {
  return new ZLinkError('InvalidOperation', message, { details: { reason: 'member', spot } });
}
