import type { ObjectKind } from '../../core/kinds.js';
import {
  RecordKind,
  WIRE_VERSION,
  isCorrelation,
  isCount,
  isName,
  isObjectKind,
  isStr,
  packr,
} from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import { type ObjectRouteFences, readObjectFences, writeObjectFences } from './object-fences.js';

/**
 * The messageFollow notice (docs/protocol.md#message-follow, record 50; docs/decisions.md "The messageFollow
 * notice"): the source of a move tells the runtime that sent a message on the old route that it was
 * relayed, so that runtime drops its cache entry and looks the owner up again on its next call.
 *
 *     MessageFollow [1, 50, kind, id, sourceFences, targetFences, hops, queued, operationId, replyRoute | nil, ...later]
 *     replyRoute = [correlation, originRid, originGeneration]
 *
 * `sourceFences` is the route the message came on (the entry to drop), `targetFences` the route it
 * was relayed along; `hops` how many relays the message has taken with this one, `queued` how many
 * messages waited on the follow route ahead of it when it was relayed. The operation id and reply
 * route name the message (a one-way send has no reply route). No flags and no payload: a notice
 * carries no application data.
 */
export interface MessageFollowRecord {
  readonly kind: typeof RecordKind.MessageFollow;
  readonly objectKind: ObjectKind;
  readonly id: string;
  readonly source: ObjectRouteFences;
  readonly target: ObjectRouteFences;
  readonly hops: number;
  readonly queued: number;
  readonly operationId: string;
  /** The relayed request's reply route; `undefined` for a send. */
  readonly replyRoute: { readonly correlation: number; readonly origin: NodeRun } | undefined;
}

/** The notice for one relayed message (`record`'s fields; `kind` is implied). */
export function encodeMessageFollow(notice: Omit<MessageFollowRecord, 'kind'>): Uint8Array {
  const { replyRoute } = notice;
  return packr.pack([
    WIRE_VERSION,
    RecordKind.MessageFollow,
    notice.objectKind,
    notice.id,
    writeObjectFences(notice.source),
    writeObjectFences(notice.target),
    notice.hops,
    notice.queued,
    notice.operationId,
    replyRoute === undefined
      ? null
      : [replyRoute.correlation, replyRoute.origin.rid, replyRoute.origin.nodeGeneration],
  ]);
}

const MALFORMED = 'malformed messageFollow record';

/**
 * Reads a notice (the record array); the reason it is malformed otherwise. Never throws; later fields are
 * ignored.
 */
export function decodeMessageFollow(value: readonly unknown[]): MessageFollowRecord | string {
  const [, , objectKind, id, rawSource, rawTarget, hops, queued, operationId, rawRoute] = value;
  const source = readObjectFences(rawSource);
  const target = readObjectFences(rawTarget);
  if (
    value.length < 10 ||
    !isObjectKind(objectKind) ||
    !isName(id) ||
    source === undefined ||
    target === undefined ||
    !isCount(hops) ||
    !isCount(queued) ||
    !isName(operationId)
  ) {
    return MALFORMED;
  }
  let replyRoute: MessageFollowRecord['replyRoute'];
  if (rawRoute !== null) {
    if (!Array.isArray(rawRoute) || rawRoute.length < 3) return MALFORMED;
    const [correlation, rid, nodeGeneration] = rawRoute as unknown[];
    if (!isCorrelation(correlation) || !isName(rid) || !isStr(nodeGeneration)) return MALFORMED;
    replyRoute = { correlation, origin: { rid, nodeGeneration } };
  }
  return {
    kind: RecordKind.MessageFollow,
    objectKind,
    id,
    source,
    target,
    hops,
    queued,
    operationId,
    replyRoute,
  };
}
