import { fromWireError } from '../../core/errors.js';
import { type ErrorReplyRecord, type ReplyRecord, RecordKind } from '../../core/wire/index.js';
import type { RouteKind, ZLinkEvents } from '../../core/observe/index.js';
import type { PendingRequests } from '../../core/calls/index.js';

/**
 * Settles the pending request a reply or error reply answers. A reply whose payload cannot be
 * decoded ends its request `ProtocolError`. Returns `false` when no request waits under that
 * correlation (late, or forged): the caller reports it, and nothing else happens.
 */
export function settleReply(pending: PendingRequests, record: ReplyRecord | ErrorReplyRecord): boolean {
  if (record.kind === RecordKind.ErrorReply) {
    return pending.reject(record.correlation, (d) => fromWireError(record.error, d));
  }
  return pending.resolveEncoded(record.correlation, record.payload);
}

/**
 * A reply no request waits for — its request already ended (timeout, cancel, lost route), or the
 * correlation was forged — is dropped and reported as a `drop` delivery, never handed to another.
 */
export function dropUnmatchedReply(
  events: ZLinkEvents,
  route: RouteKind,
  where: { readonly channel?: string; readonly mesh?: string; readonly sourceRid?: string },
  correlation: number,
): void {
  events.emit({
    type: 'delivery',
    result: 'drop',
    route,
    ...where,
    kind: 'request',
    reason: `reply matches no pending request (correlation ${correlation}): it ended before the reply came`,
  });
}
