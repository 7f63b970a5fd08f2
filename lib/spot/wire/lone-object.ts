import type { ObjectKind } from '../../core/kinds.js';
import { MsgpackReader, RecordKind, WIRE_VERSION } from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import {
  type ObjectReplyRecord,
  type ObjectRequestRecord,
  type ObjectSendRecord,
  REQUEST_LENGTH,
  SEND_LENGTH,
  type SessionStamp,
} from './object-wire.js';

const reader = new MsgpackReader();

/**
 * The fixarray heads of a call as its sender writes it, as a relay does (one item more: the hops), and
 * as a session's relay does (two more: the hops and the session's stamp).
 */
const SEND = 0x90 | SEND_LENGTH;
const REQUEST = 0x90 | REQUEST_LENGTH;
/** A session stamp's fixarray head (`packSessionStamp`). */
const STAMP = 0x96;

/**
 * An object send, request or reply read without msgpackr, the way `readCallFrame` reads a channel
 * call: only the forms this version writes (ASCII names, 32-bit numbers, no trace, no later fields).
 * Anything else (`undefined`) goes to `decodeObjectRecord`, which reads the same bytes to the same
 * record (property tests hold them to it), so this is a shortcut, never a second meaning. A node
 * generation is any string on the wire; an empty one (never written by this version) takes the long way.
 * A call Message Follow relayed (its hop count after the trace) is read here too: on its new owner it
 * is every call on a route that just moved; and a call a session relayed (its hops and stamp after the
 * trace), every message a game client sends its Actor.
 */
export function readLoneObjectRecord(
  bytes: Uint8Array,
): ObjectSendRecord | ObjectRequestRecord | ObjectReplyRecord | undefined {
  if (bytes[1] !== WIRE_VERSION) return undefined;
  const head = bytes[0];
  const kind = bytes[2];
  const r = reader.reset(bytes, 3);
  if (head === 0x95 && kind === RecordKind.ObjectReply) {
    const correlation = r.uint();
    const originGeneration = correlation ? r.asciiStr(0) : undefined;
    const payload = originGeneration === undefined ? undefined : r.bin();
    if (payload === undefined || !r.atEnd) return undefined;
    return {
      kind: RecordKind.ObjectReply,
      correlation: correlation as number,
      originGeneration: originGeneration as string,
      payload,
    };
  }
  let correlation: number | undefined;
  let origin: NodeRun | undefined;
  const extra = (head as number) - (kind === RecordKind.ObjectRequest ? REQUEST : SEND);
  if (!(extra >= 0 && extra <= 2)) return undefined;
  if (kind === RecordKind.ObjectRequest) {
    correlation = r.uint();
    const rid = correlation ? r.asciiStr(1) : undefined;
    const nodeGeneration = rid === undefined ? undefined : r.asciiStr(0);
    if (nodeGeneration === undefined) return undefined;
    origin = { rid: rid as string, nodeGeneration };
  } else if (kind !== RecordKind.ObjectSend) return undefined;
  const objectKind = r.asciiStr(2);
  if (objectKind !== 'spot' && objectKind !== 'actor') return undefined;
  return readCallTail(r, objectKind, correlation, origin, extra);
}

/**
 * From the id on: id, fences, operation id, packet, metadata, payload, nil trace, then (`extra` 1) a
 * hop count from 1 to 127, or (`extra` 2) a hop count to 127 and a session's stamp of six items (ASCII
 * names, a non-empty generation, 32-bit numbers), and nothing after; made into the whole record at
 * once (a request's when `origin` is given).
 */
function readCallTail(
  r: MsgpackReader,
  objectKind: ObjectKind,
  correlation: number | undefined,
  origin: NodeRun | undefined,
  extra: number,
): ObjectSendRecord | ObjectRequestRecord | undefined {
  const id = r.asciiStr(3);
  if (id === undefined || r.peek() !== 0x95) return undefined;
  r.skip(1);
  const ownerRid = r.asciiStr(4);
  const ownerGeneration = ownerRid === undefined ? undefined : r.asciiStr(5);
  const objectGeneration = ownerGeneration === undefined ? undefined : r.uint();
  const authorityOwnerGeneration = objectGeneration === undefined ? undefined : r.uint();
  const ownerLeaseGeneration = authorityOwnerGeneration === undefined ? undefined : r.uint();
  const operationId = ownerLeaseGeneration === undefined ? undefined : r.asciiStr(6);
  const packet = operationId === undefined ? undefined : r.asciiStr(7);
  const metadata = packet === undefined ? undefined : r.nilOrBin();
  const payload = metadata === undefined ? undefined : r.bin();
  if (payload === undefined || r.peek() !== 0xc0) return undefined;
  r.skip(1);
  let hops = 0;
  let session: SessionStamp | undefined;
  if (extra > 0) {
    // A positive fixint: a relay writes no other form, and 0 is written only before a stamp.
    hops = r.peek() ?? 0x80;
    if (hops > 0x7f || (hops === 0 && extra === 1)) return undefined;
    r.skip(1);
    if (extra === 2 && (session = readStamp(r)) === undefined) return undefined;
  }
  if (!r.atEnd) return undefined;
  const fences = {
    owner: { rid: ownerRid as string, nodeGeneration: ownerGeneration as string },
    objectGeneration: objectGeneration as number,
    authorityOwnerGeneration: authorityOwnerGeneration as number,
    ownerLeaseGeneration: ownerLeaseGeneration as number,
  };
  // One literal for both kinds (a send's correlation and origin left undefined): one object shape.
  return {
    kind: origin === undefined ? RecordKind.ObjectSend : RecordKind.ObjectRequest,
    correlation,
    origin,
    objectKind,
    id,
    fences,
    operationId: operationId as string,
    packet: packet as string,
    metadata: metadata ?? undefined,
    payload,
    trace: undefined,
    hops,
    session,
  } as ObjectSendRecord | ObjectRequestRecord;
}

/** A session's stamp as this version writes it (`packSessionStamp`); `undefined` for any other form. */
function readStamp(r: MsgpackReader): SessionStamp | undefined {
  if (r.peek() !== STAMP) return undefined;
  r.skip(1);
  const ownerRid = r.asciiStr(8);
  const ownerGeneration = ownerRid === undefined ? undefined : r.asciiStr(9);
  const listener = ownerGeneration === undefined ? undefined : r.asciiStr(10);
  const sessionId = listener === undefined ? undefined : r.asciiStr(11);
  const bindingGeneration = sessionId === undefined ? undefined : r.uint();
  const sequence = bindingGeneration === undefined ? undefined : r.uint();
  if (sequence === undefined) return undefined;
  return {
    ownerRid: ownerRid as string,
    ownerGeneration: ownerGeneration as string,
    listener: listener as string,
    sessionId: sessionId as string,
    bindingGeneration: bindingGeneration as number,
    sequence,
  };
}
