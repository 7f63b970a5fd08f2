import { RecordKind } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { MeshLink } from '../../core/ports/index.js';
import {
  type CarriedEvent,
  type ObjectRequestRecord,
  type ObjectSendRecord,
  type SpotEventRecord,
  decodeObjectRecord,
  readLoneObjectRecord,
} from '../wire/index.js';
import type { InboundObjectCall, ObjectAnswer } from './object-call.js';
import { remoteAnswer, sendAnswer } from './remote-answer.js';

/**
 * A send or request record from peer `fromRid` as its owner admits it, with the answer that ends it:
 * a request's on its reply route (the origin it carries, wherever it is handled), a send's as a
 * report (a stale route told to `fromRid`). One reading for calls off the wire and calls a move carried;
 * `wire` is the record's own bytes, kept on the call (see `InboundObjectCall.wire`).
 */
export function inboundCall(
  r: ObjectSendRecord | ObjectRequestRecord,
  fromRid: string,
  link: MeshLink,
  events: ZLinkEvents,
  mesh: string,
  wire: Uint8Array,
): { readonly call: InboundObjectCall; readonly answer: ObjectAnswer } {
  const call = {
    messageKind: r.kind === RecordKind.ObjectSend ? ('send' as const) : ('request' as const),
    objectKind: r.objectKind,
    id: r.id,
    fences: r.fences,
    operationId: r.operationId,
    packet: r.packet,
    metadata: r.metadata,
    payload: r.payload,
    trace: r.trace,
    correlation: r.kind === RecordKind.ObjectRequest ? r.correlation : undefined,
    origin: r.kind === RecordKind.ObjectRequest ? r.origin : undefined,
    sourceRid: fromRid,
    hops: r.hops,
    session: r.session,
    wire,
  };
  const answer =
    r.kind === RecordKind.ObjectRequest
      ? remoteAnswer(link, r.origin.rid, r.correlation, r.origin.nodeGeneration)
      : sendAnswer(link, events, mesh, fromRid, call);
  return { call, answer };
}

/** The send, request or event `bytes` hold (a record a move carried), or the reason they are not one. */
export function readCallRecord(
  bytes: Uint8Array,
): ObjectSendRecord | ObjectRequestRecord | (SpotEventRecord & { carried: CarriedEvent }) | string {
  const r = readLoneObjectRecord(bytes) ?? decodeObjectRecord(bytes);
  if (typeof r === 'string') return r;
  if (r.kind === RecordKind.SpotEvent)
    return r.carried ? { ...r, carried: r.carried } : 'a moved event does not name its publisher';
  if (r.kind !== RecordKind.ObjectSend && r.kind !== RecordKind.ObjectRequest)
    return `a moved call is record kind ${r.kind}, not a send or request`;
  return r;
}
