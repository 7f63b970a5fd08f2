import {
  type ErrorReplyRecord,
  type PendingRequests,
  type ReplyRecord,
  RecordKind,
  ZLinkError,
  decodePayload,
  fromWireError,
} from '../core/index.js';

/**
 * Settles the pending request a reply or error reply answers. A reply whose payload cannot be
 * decoded ends its request `ProtocolError`. Returns `false` when no request waits under that
 * correlation (late, or forged): the caller reports it, and nothing else happens.
 */
export function settleReply(pending: PendingRequests, record: ReplyRecord | ErrorReplyRecord): boolean {
  if (record.kind === RecordKind.ErrorReply) {
    return pending.reject(record.correlation, (d) => fromWireError(record.error, d));
  }
  const payload = decodePayload(record.payload);
  return payload.ok
    ? pending.resolve(record.correlation, payload.value)
    : pending.reject(
        record.correlation,
        (d) => new ZLinkError('ProtocolError', `${d}: reply could not be decoded: ${payload.reason}`),
      );
}
