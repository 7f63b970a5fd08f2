import {
  type ClientFrame,
  FrameSplitter,
  type FramingFault,
  PONG_FRAME,
  SESSION_PROTOCOL_VERSION,
  type SessionCloseReason,
  SessionFrameKind,
  bodyLengthFault,
  closeFrame,
  closeReasonOf,
  errorFrame,
  pushFrame,
  readClientFrame,
  replyFrame,
  SessionCloseCode,
  welcomeFrame,
} from '../../core/wire/index.js';
import type { RemoteAddress } from '../../core/kinds.js';
import type { SessionLink, SessionLinkHandler, SessionResumeTerms } from '../../core/ports/index.js';
import type { NormalizedSessionListener } from '../../core/options/index.js';
import { SESSION_BYTE_HEARD_MS } from '../timing.js';

/** Where a connection is in the session protocol (docs/sessions-wire.md, "A session's life"). */
type ConnectionState = 'hello' | 'opening' | 'open' | 'closed';

/** What a connection needs of its listener: writing, the one close path, the handler. */
export interface ConnectionHost {
  readonly options: NormalizedSessionListener;
  readonly handler: SessionLinkHandler;
  /** The connection was welcomed (counted and told as an `opened` session). */
  welcomed(connection: SessionConnection): void;
  /**
   * Queues `frame` for the connection and schedules the turn's flush. A `limited` write (all but the
   * Close frame) first checks what the connection already holds against `maxPendingBytes`: past it
   * the session is closed `slowConsumer` and the frame dropped. The Close frame is never refused, so a
   * close for another reason is reported as that reason.
   */
  write(connection: SessionConnection, frame: Buffer, limited?: boolean): void;
  /**
   * Ends the connection on the socket and counts it: at once when the client is gone or ended it
   * (`byClient`) or reads nothing (`slowConsumer`), else once the Close frame had its chance.
   */
  ended(connection: SessionConnection, reason: SessionCloseReason, detail: string, byClient: boolean): void;
}

const FAULT_REASON: Record<FramingFault, SessionCloseReason> = {
  emptyFrame: 'protocolError',
  frameTooLarge: 'frameTooLarge',
};
const FAULT_DETAIL: Record<FramingFault, string> = {
  emptyFrame: 'a frame of length 0',
  frameTooLarge: 'frame over maxFrameBytes',
};

/**
 * One connection on a session listener, whatever the socket: its frames (split from a byte stream, or
 * one per message), the protocol state, the requests awaiting their answer. Implements the SessionLink port for the
 * layer above. Every path that ends it goes through `finish`, once. A listener's own connection class
 * adds what its socket needs to write (and says how many bytes that holds, `writeBytes`).
 */
export abstract class SessionConnection implements SessionLink {
  private state: ConnectionState = 'hello';
  /** Made at the first chunk of a byte stream: a message transport never needs one. */
  private splitter: FrameSplitter | undefined;
  private readonly waiting = new Set<number>();
  /** In the listener's dirty list for this turn's flush. */
  dirty = false;
  sessionId: string | undefined;
  /** Counted toward the listener's `maxSessions` (not a connection refused at its accept). */
  counted = false;
  /** When it ended (ms), for the listener's tombstone. */
  closedAt: number | undefined;
  /**
   * When the client was last heard, for the idle timeout (ms, the listener's clock): a whole frame sets
   * it to the time it completed; bytes that complete none move it on by `heardBytes`
   * (docs/sessions.md#idle-timeout). And when the connection was accepted.
   */
  heardAt: number;
  readonly acceptedAt: number;
  /**
   * The client's address: the socket's peer from the accept, replaced by the client a trusted proxy
   * names (its PROXY header, read before any frame) before the Hello can reach the layer above.
   */
  remoteAddress: RemoteAddress;
  /** Welcomed with resume terms: its end without a Close frame is a drop (docs/sessions-wire.md#resume-after-a-drop). */
  resumable = false;
  /** Its Welcome resumed a session (told as `resumed`). */
  resumed = false;
  /** It ended as a drop (told as `dropped`): the session may come back on another connection. */
  dropped = false;

  constructor(
    private readonly host: ConnectionHost,
    now: number,
    remoteAddress: RemoteAddress,
  ) {
    this.heardAt = now;
    this.acceptedAt = now;
    this.remoteAddress = remoteAddress;
  }

  /**
   * Bytes held to be written to the client: what waits in the listener and what the socket below may
   * still hold. Counted toward `maxPendingBytes`.
   */
  abstract get writeBytes(): number;

  get listener(): string {
    return this.host.options.listener;
  }

  get open(): boolean {
    return this.state !== 'closed';
  }

  /** Welcomed and not closed. */
  get welcomed(): boolean {
    return this.state === 'open';
  }

  /** Still waiting for its Hello, or for the answer to it. */
  get handshaking(): boolean {
    return this.state === 'hello' || this.state === 'opening';
  }

  get awaiting(): number {
    return this.waiting.size;
  }

  /** Bytes held for this connection right now: a frame being gathered, and `writeBytes`. */
  get heldBytes(): number {
    return (this.splitter?.buffered ?? 0) + this.writeBytes;
  }

  /**
   * One chunk of the client's byte stream (as the socket delivered it), split into frame bodies at
   * their length prefixes (docs/sessions-wire.md#framing).
   */
  receive(chunk: Buffer, now: number): void {
    if (this.state === 'closed') return;
    this.splitter ??= new FrameSplitter(this.host.options.maxFrameBytes);
    const fault = this.splitter.push(chunk, (body) => {
      this.heardAt = now;
      this.frame(body);
      return this.open;
    });
    // No frame completed: the chunk is part of one still arriving, and counts by its bytes.
    if (this.heardAt !== now) this.heardBytes(chunk.length, now);
    if (fault !== undefined) this.framingFault(fault);
  }

  /**
   * `bytes` arrived and completed no frame (part of one still arriving, or a WebSocket's control
   * frames): each counts `SESSION_BYTE_HEARD_MS` toward the idle timeout, never past `now`. A frame
   * trickling in is then as idle as silence, and a slow one at a usable rate is never cut
   * (docs/sessions.md#idle-timeout).
   */
  heardBytes(bytes: number, now: number): void {
    this.heardAt = Math.min(now, this.heardAt + bytes * SESSION_BYTE_HEARD_MS);
  }

  /**
   * One whole frame body, from a transport whose messages are the frames (a WebSocket's binary
   * message, no length prefix). The same length rule as a prefix's (docs/sessions-wire.md#framing),
   * then the same path as a body split from a stream.
   */
  receiveBody(body: Uint8Array, now: number): void {
    if (this.state === 'closed') return;
    this.heardAt = now;
    const fault = bodyLengthFault(body.length, this.host.options.maxFrameBytes);
    if (fault !== undefined) return this.framingFault(fault);
    this.frame(body);
  }

  private framingFault(fault: FramingFault): void {
    if (this.open) this.close(FAULT_REASON[fault], FAULT_DETAIL[fault]);
  }

  private frame(body: Uint8Array): void {
    const f = readClientFrame(body);
    if (typeof f === 'string') return this.close('protocolError', f);
    switch (f.kind) {
      case SessionFrameKind.Ping:
        return this.host.write(this, PONG_FRAME);
      case SessionFrameKind.Pong:
        return;
      case SessionFrameKind.Close:
        return this.finish('normal', closeDetail(f), true, false);
    }
    if (this.state === 'open') return this.business(f);
    if (this.state === 'hello' && f.kind === SessionFrameKind.Hello) {
      if (f.version !== SESSION_PROTOCOL_VERSION)
        return this.close('unsupportedVersion', `this server speaks version ${SESSION_PROTOCOL_VERSION}`);
      this.state = 'opening';
      return this.host.handler.opened(this, f.token, f.resume);
    }
    this.close(
      'protocolError',
      this.state === 'hello' ? 'the first frame must be a Hello' : 'a frame before the Welcome',
    );
  }

  private business(f: ClientFrame): void {
    if (f.kind === SessionFrameKind.Request) {
      if (this.waiting.has(f.correlation))
        return this.close('protocolError', `correlation ${f.correlation} is already in flight`);
      if (this.waiting.size >= this.host.options.maxInFlight)
        return this.close('tooManyInFlight', `more than ${this.host.options.maxInFlight} requests in flight`);
      this.waiting.add(f.correlation);
      return this.host.handler.request(this, f.correlation, f.packet, f.payload);
    }
    if (f.kind === SessionFrameKind.Send) return this.host.handler.send(this, f.packet, f.payload);
    if (f.kind === SessionFrameKind.Ack) {
      if (this.resumable) return this.host.handler.acked?.(this, f.received);
      return this.close('protocolError', 'an Ack on a session without resume');
    }
    this.close('protocolError', 'a second Hello');
  }

  welcome(sessionId: string, resume?: SessionResumeTerms): void {
    if (this.state !== 'opening') return;
    this.state = 'open';
    this.sessionId = sessionId;
    this.host.write(this, welcomeFrame(sessionId, this.host.options, resume));
    if (resume) {
      this.resumable = true;
      this.resumed = resume.resumed;
      for (const correlation of resume.awaiting) this.waiting.add(correlation);
    }
    this.host.welcomed(this);
  }

  reply(correlation: number, payload: Uint8Array): boolean {
    if (this.state !== 'open' || !this.waiting.delete(correlation)) return false;
    this.host.write(this, replyFrame(correlation, payload));
    return true;
  }

  error(correlation: number, code: string, message: string, details?: unknown): boolean {
    if (this.state !== 'open' || !this.waiting.delete(correlation)) return false;
    this.host.write(this, errorFrame(correlation, code, message, details));
    return true;
  }

  push(packet: string, payload: Uint8Array): boolean {
    if (this.state !== 'open') return false;
    this.host.write(this, pushFrame(packet, payload));
    return this.open;
  }

  close(reason: SessionCloseReason, detail = ''): void {
    if (this.state === 'closed') return;
    // A client that reads nothing would never take the Close frame: it goes without one.
    if (reason !== 'slowConsumer') this.host.write(this, closeFrame(SessionCloseCode[reason], detail), false);
    this.finish(reason, detail, false);
  }

  drop(reason: SessionCloseReason, detail: string): void {
    this.finish(reason, detail, true, true);
  }

  /**
   * The one end of a connection: the layer above hears of it once, if it had heard of the Hello. `lost`
   * (by default, an end the client did not say with a Close frame) makes a resumable link's end a drop.
   */
  finish(reason: SessionCloseReason, detail: string, byClient: boolean, lost = byClient): void {
    if (this.state === 'closed') return;
    const told = this.state !== 'hello';
    this.state = 'closed';
    this.waiting.clear();
    this.dropped = lost && this.resumable;
    this.host.ended(this, reason, detail, byClient);
    if (told) this.host.handler.closed(this, reason, detail, this.dropped);
  }
}

function closeDetail(f: { code: number; reason: string }): string {
  const name = closeReasonOf(f.code);
  return `closed by the client (${f.code}${name && name !== 'normal' ? ` ${name}` : ''}${f.reason ? `: ${f.reason}` : ''})`;
}
