import {
  type NodeRun,
  type ObjectErrorReplyRecord,
  type ObjectReplyRecord,
  type PendingRequests,
  type ZLinkEvents,
  RecordKind,
  ZLinkError,
  decodePayload,
  fromObjectWireError,
} from '../../core/index.js';

/**
 * Settles the pending request an object reply answers. A reply for another run of this node (its
 * correlations start over) or for a request that already ended is dropped and reported, never handed
 * to another request (spot-actor-routing §4.2: a reply for an old incarnation is no message).
 */
export function settleObjectReply(
  pending: PendingRequests,
  events: ZLinkEvents,
  mesh: string,
  self: NodeRun,
  fromRid: string,
  r: ObjectReplyRecord | ObjectErrorReplyRecord,
): void {
  let settled = false;
  if (r.originGeneration === self.nodeGeneration) {
    if (r.kind === RecordKind.ObjectErrorReply) {
      settled = pending.reject(r.correlation, (d) => fromObjectWireError(r.error, d));
    } else {
      const payload = decodePayload(r.payload);
      settled = payload.ok
        ? pending.resolve(r.correlation, payload.value)
        : pending.reject(
            r.correlation,
            (d) => new ZLinkError('ProtocolError', `${d}: reply could not be decoded: ${payload.reason}`),
          );
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
