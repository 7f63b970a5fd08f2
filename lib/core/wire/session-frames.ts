import { Buffer } from 'node:buffer';
import { isCount, packr } from './codec.js';
import { MsgpackReader } from './msgpack-read.js';
import { msgpackValueEnd } from './msgpack-scan.js';
import { put, strHead, strSize, uint, uintSize, utf8Length } from './msgpack-write.js';
import {
  FRAME_HEADER_BYTES,
  SESSION_PROTOCOL_VERSION,
  SessionCloseCode,
  SessionFrameKind,
  writeFrameHeader,
} from '../session-wire/index.js';

/**
 * The frames of an end-user session (docs/sessions-wire.md is the contract; keep the two in step).
 * Every body is one msgpack array whose first item is the frame kind; items a later version appends
 * after the ones listed here are ignored by this one.
 *
 *     Hello    c→s  [1, version, token?, resume?]
 *     Welcome  s→c  [2, version, sessionId, heartbeatMs, maxFrameBytes, maxInFlight,
 *                    resumeToken?, resumeGraceMs?, received?]
 *     Request  c→s  [3, correlation, packet, payload]
 *     Reply    s→c  [4, correlation, payload]
 *     Error    s→c  [5, correlation, code, message, details?]
 *     Send     c→s  [6, packet, payload]
 *     Push     s→c  [7, packet, payload]
 *     Ping     both [8]
 *     Pong     both [9]
 *     Close    both [10, code, reason]
 *     Ack      c→s  [11, received]
 *
 * The Hello's `resume`, the Welcome's last three items and Ack are resume after a drop
 * (docs/sessions-wire.md#resume-after-a-drop): a client that sends no `resume` sees neither.
 * `payload` is any one msgpack value, written inline (not wrapped in bin): a client in any language
 * packs the whole array with its msgpack library. The server never decodes a payload it only relays:
 * it hands on the payload's bytes as they arrived.
 */

/**
 * What a Hello asks of resume (docs/sessions-wire.md#resume-after-a-drop): a new session it may resume
 * later (`resume: []`), or to resume session `sessionId` with its token, having received `received` of
 * its Replies, Errors and Pushes. A Hello without `resume` asks for neither.
 */
export type SessionResumeAsk =
  | { readonly kind: 'new' }
  | {
      readonly kind: 'resume';
      readonly sessionId: string;
      readonly token: string;
      readonly received: number;
    };

const NEW_RESUMABLE: SessionResumeAsk = Object.freeze({ kind: 'new' });

/** A frame a client sent, as the server reads it; a payload is the msgpack bytes of the value. */
export type ClientFrame =
  | {
      readonly kind: typeof SessionFrameKind.Hello;
      readonly version: number;
      readonly token: unknown;
      readonly resume: SessionResumeAsk | undefined;
    }
  | {
      readonly kind: typeof SessionFrameKind.Request;
      readonly correlation: number;
      readonly packet: string;
      readonly payload: Uint8Array;
    }
  | { readonly kind: typeof SessionFrameKind.Send; readonly packet: string; readonly payload: Uint8Array }
  | { readonly kind: typeof SessionFrameKind.Ping | typeof SessionFrameKind.Pong }
  | { readonly kind: typeof SessionFrameKind.Close; readonly code: number; readonly reason: string }
  | { readonly kind: typeof SessionFrameKind.Ack; readonly received: number };

/**
 * Every kind but Request and Send is decoded whole: this bounds what one such frame can make the
 * decoder allocate (a Hello's token included), whatever the listener's `maxFrameBytes`.
 */
export const MAX_CONTROL_FRAME_BYTES = 8192;

const reader = new MsgpackReader();

/**
 * Reads one client frame body; a string says what is wrong with it (the connection then closes with
 * `protocolError`). Request and Send, the hot kinds, are read by hand without decoding the payload;
 * the others are small and rare and go through msgpackr.
 */
export function readClientFrame(body: Uint8Array): ClientFrame | string {
  const head = body[0] as number;
  const length = (head & 0xf0) === 0x90 ? head & 0x0f : -1;
  if (length < 1) return 'a frame body must be a msgpack array (of up to 15 items) starting with its kind';
  const r = reader.reset(body, 1);
  const kind = r.uint();
  if (kind === SessionFrameKind.Request || kind === SessionFrameKind.Send) {
    const request = kind === SessionFrameKind.Request;
    if (length < (request ? 4 : 3)) return `frame kind ${kind} needs ${request ? 4 : 3} items, got ${length}`;
    const correlation = request ? r.uint() : 0;
    if (request && (correlation === undefined || correlation === 0))
      return 'a request correlation must be an integer 1..4294967295';
    const packet = readPacket(body, r.offset);
    if (typeof packet === 'string') return packet;
    const end = msgpackValueEnd(body, packet.end);
    if (end < 0) return 'the payload runs past the end of the frame';
    const payload = body.subarray(packet.end, end);
    return request
      ? { kind, correlation: correlation as number, packet: packet.name, payload }
      : { kind, packet: packet.name, payload };
  }
  if (body.length > MAX_CONTROL_FRAME_BYTES)
    return `a frame of kind ${String(kind)} is at most ${MAX_CONTROL_FRAME_BYTES} bytes, got ${body.length}`;
  let items: unknown;
  try {
    items = packr.unpack(body);
  } catch (error) {
    return `malformed msgpack: ${(error as Error).message}`;
  }
  const v = items as unknown[];
  switch (kind) {
    case SessionFrameKind.Hello: {
      if (!Number.isSafeInteger(v[1])) return 'a hello needs its protocol version, an integer';
      const resume = readResumeAsk(v[3]);
      if (typeof resume === 'string') return resume;
      return { kind, version: v[1] as number, token: v[2] ?? undefined, resume };
    }
    case SessionFrameKind.Ack:
      if (!isCount(v[1])) return 'an ack needs the count of frames received, an integer >= 0';
      return { kind, received: v[1] };
    case SessionFrameKind.Ping:
    case SessionFrameKind.Pong:
      return { kind };
    case SessionFrameKind.Close:
      return {
        kind,
        code: Number.isSafeInteger(v[1]) ? (v[1] as number) : SessionCloseCode.normal,
        reason: typeof v[2] === 'string' ? v[2].slice(0, 256) : '',
      };
    default:
      return `unknown frame kind ${typeof kind === 'number' ? kind : String(v[0])}`;
  }
}

/**
 * A Hello's `resume` item: `[]`, or `[sessionId, resumeToken, received]`. Anything but an array is no
 * resume, as a version 1 reader ignored a fourth item; an array of another shape is refused.
 */
function readResumeAsk(item: unknown): SessionResumeAsk | undefined | string {
  if (!Array.isArray(item)) return undefined;
  if (item.length === 0) return NEW_RESUMABLE;
  const [sessionId, token, received] = item as unknown[];
  if (typeof sessionId === 'string' && typeof token === 'string' && isCount(received))
    return { kind: 'resume', sessionId, token, received };
  return "a hello's resume must be [] or [sessionId, resumeToken, received]";
}

/** A packet name: a non-empty msgpack string (fixstr, str 8 or str 16). */
function readPacket(body: Uint8Array, at: number): { name: string; end: number } | string {
  const head = body[at] as number;
  let start: number;
  let n: number;
  if ((head & 0xe0) === 0xa0) {
    start = at + 1;
    n = head & 0x1f;
  } else if (head === 0xd9) {
    start = at + 2;
    n = body[at + 1] as number;
  } else if (head === 0xda) {
    start = at + 3;
    n = (((body[at + 1] as number) << 8) | (body[at + 2] as number)) >>> 0;
  } else return 'a packet name must be a msgpack string';
  const end = start + n;
  if (n === 0 || !(end <= body.length)) return 'a packet name must be a non-empty string inside the frame';
  reader.reset(body, at);
  const ascii = reader.asciiStr(0);
  return { name: ascii ?? Buffer.from(body.buffer, body.byteOffset + start, n).toString('utf8'), end };
}

// --- writing server frames -----------------------------------------------------------------

/** A Reply or a Push: kind, a uint or a string, then the payload bytes as they are. */
function withPayload(kind: number, first: number | string, payload: Uint8Array): Buffer {
  const n = typeof first === 'string' ? utf8Length(first) : 0;
  const firstSize = typeof first === 'string' ? strSize(n) : uintSize(first);
  const bodyLength = 2 + firstSize + payload.length;
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + bodyLength);
  let at = writeFrameHeader(out, 0, bodyLength);
  out[at++] = 0x93;
  out[at++] = kind;
  if (typeof first === 'string') {
    at = strHead(out, at, n);
    at += out.write(first, at, n, 'utf8');
  } else at = uint(out, at, first);
  put(out, at, payload);
  return out;
}

/** A Reply frame, prefix included: the request's correlation and the payload's msgpack bytes. */
export function replyFrame(correlation: number, payload: Uint8Array): Buffer {
  return withPayload(SessionFrameKind.Reply, correlation, payload);
}

/** A Push frame, prefix included. */
export function pushFrame(packet: string, payload: Uint8Array): Buffer {
  return withPayload(SessionFrameKind.Push, packet, payload);
}

/** Any other frame, prefix included, through msgpackr (rare frames: Welcome, Error, Close, Ping, Pong). */
export function controlFrame(items: readonly unknown[]): Buffer {
  const body = packr.pack(items);
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + body.length);
  put(out, writeFrameHeader(out, 0, body.length), body);
  return out;
}

/** What a Welcome announces of the listener's limits. */
export interface WelcomeLimits {
  readonly heartbeatMs: number;
  readonly maxFrameBytes: number;
  readonly maxInFlight: number;
}

/** A resumable session's part of its Welcome (docs/sessions-wire.md#resume-after-a-drop). */
export interface WelcomeResume {
  /** The token that resumes the session once, after a drop. */
  readonly token: string;
  readonly graceMs: number;
  /** The client's Requests and Sends the server has taken (0 for a new session). */
  readonly received: number;
}

/** A Welcome frame, prefix included; the resume items only for a session the client may resume. */
export function welcomeFrame(sessionId: string, limits: WelcomeLimits, resume?: WelcomeResume): Buffer {
  const { heartbeatMs, maxFrameBytes, maxInFlight } = limits;
  const items = [
    SessionFrameKind.Welcome,
    SESSION_PROTOCOL_VERSION,
    sessionId,
    heartbeatMs,
    maxFrameBytes,
    maxInFlight,
  ];
  return controlFrame(resume ? [...items, resume.token, resume.graceMs, resume.received] : items);
}

/**
 * An Error frame; `details` (what the failure carried, bounded by `toWireError`) only when there are some.
 */
export function errorFrame(correlation: number, code: string, message: string, details?: unknown): Buffer {
  return controlFrame(
    details === undefined
      ? [SessionFrameKind.Error, correlation, code, message]
      : [SessionFrameKind.Error, correlation, code, message, details],
  );
}

export function closeFrame(code: number, reason: string): Buffer {
  return controlFrame([SessionFrameKind.Close, code, reason]);
}

export const PING_FRAME: Buffer = controlFrame([SessionFrameKind.Ping]);
export const PONG_FRAME: Buffer = controlFrame([SessionFrameKind.Pong]);
