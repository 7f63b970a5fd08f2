import { ZLinkError, fromObjectWireError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import { RecordKind } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { PendingRequests } from '../../core/calls/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import {
  type ObjectRouteFences,
  type ObjectErrorReplyRecord,
  type ObjectReplyRecord,
  readObjectFences,
} from '../wire/index.js';

/**
 * Settles the pending request an object reply answers. A reply for another run of this node (its
 * correlations start over) or for a request that already ended is dropped and reported, never handed
 * to another request (docs/protocol.md#object-replies: a reply for an old incarnation is no message).
 */
export function settleObjectReply(
  pending: PendingRequests,
  events: ZLinkEvents,
  mesh: string,
  self: NodeRun,
  fromRid: string,
  r: ObjectReplyRecord | ObjectErrorReplyRecord,
  onStale: (objectKind: ObjectKind, id: string, fences: ObjectRouteFences) => void,
): void {
  let settled = false;
  if (r.originGeneration === self.nodeGeneration) {
    if (r.kind === RecordKind.ObjectErrorReply) {
      if (r.error.code === 'ObjectStale') staleRoute(r.error.details, onStale);
      settled = pending.reject(r.correlation, (d) => fromObjectWireError(r.error, d));
    } else {
      settled = pending.resolveEncoded(r.correlation, r.payload);
    }
  }
  if (settled) return;
  // The table counted a correlation it did not know; a reply for another run never reached it.
  if (r.originGeneration !== self.nodeGeneration) pending.counters.late++;
  events.emit({
    type: 'delivery',
    result: 'drop',
    route: 'route-mesh',
    mesh,
    sourceRid: fromRid,
    kind: 'request',
    reason: `object reply matches no pending request (correlation ${r.correlation}): it ended before the reply came`,
  });
}

/** The route a stale answer names (the owner echoes it): the caller drops exactly that entry. */
function staleRoute(
  details: unknown,
  onStale: (objectKind: ObjectKind, id: string, fences: ObjectRouteFences) => void,
): void {
  const d = details as { objectKind?: unknown; id?: unknown; fences?: unknown } | undefined;
  const fences = readObjectFences(d?.fences);
  if (
    fences === undefined ||
    (d?.objectKind !== 'spot' && d?.objectKind !== 'actor') ||
    typeof d.id !== 'string'
  )
    return;
  onStale(d.objectKind, d.id, fences);
}

/** Peer `rid` was lost: every request waiting on it ends `RouteError` (it may have run there). */
export function failRequestsTo(pending: PendingRequests, rid: string, reason: string | undefined): void {
  pending.failRoute(
    rid,
    (d) =>
      new ZLinkError('RouteError', `${d}: the owner '${rid}' was lost (${reason}); the request may have run`),
  );
}
