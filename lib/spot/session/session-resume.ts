import { Buffer } from 'node:buffer';
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Random bytes of a resume token: 256 bits, written as 43 characters of base64url. */
const TOKEN_BYTES = 32;
/**
 * What a held frame costs besides its payload and strings (its record in the list): counted toward
 * `maxPendingBytes`, so many small frames are bounded as surely as a few large ones.
 */
const FRAME_OVERHEAD_BYTES = 64;
/** Past this many frames let go from the front of the list, the list is compacted. */
const COMPACT_AFTER = 1024;

/** A Reply, an Error or a Push of a resumable session, numbered in the order it was made (from 1). */
export type HeldFrame =
  | {
      readonly seq: number;
      readonly kind: 'reply';
      readonly correlation: number;
      readonly payload: Uint8Array;
    }
  | {
      readonly seq: number;
      readonly kind: 'error';
      readonly correlation: number;
      readonly code: string;
      readonly message: string;
      readonly details: unknown;
    }
  | { readonly seq: number; readonly kind: 'push'; readonly packet: string; readonly payload: Uint8Array };

/** A frame to hold, before it has its number. */
export type FrameToHold =
  | Omit<Extract<HeldFrame, { kind: 'reply' }>, 'seq'>
  | Omit<Extract<HeldFrame, { kind: 'error' }>, 'seq'>
  | Omit<Extract<HeldFrame, { kind: 'push' }>, 'seq'>;

/**
 * What lets a session outlive its connection (docs/sessions-wire.md#resume-after-a-drop), on its Session owner:
 * the resume token, the count of the client's Requests and Sends taken, the requests not yet answered,
 * and every Reply, Error and Push the client has not acknowledged, in the order they were made — what a
 * resume sends again. Each side counts what it received; the client's Acks let go of what it has.
 */
export class SessionResume {
  private tokenText: string;
  /** The token's characters as bytes, for the comparison. */
  private tokenBytes: Buffer;
  /** Frames the client has not acknowledged, oldest first, from `head` on. */
  private frames: HeldFrame[] = [];
  private head = 0;
  /** The number of the last frame made (0: none yet); numbers run for the session's whole life. */
  private sent = 0;
  /** The client's count: every frame up to this number reached it. */
  private acked = 0;
  /** Bytes held: the frames' payloads and strings, and `FRAME_OVERHEAD_BYTES` each. */
  private held = 0;
  /** The client's Requests and Sends this session has taken, over all its connections. */
  received = 0;
  /** Requests taken and not yet answered (each is answered once, on whatever connection is current). */
  readonly pending = new Set<number>();
  /** While the client is away: the end of its grace. */
  grace: NodeJS.Timeout | undefined;

  constructor(readonly graceMs: number) {
    this.tokenText = newToken();
    this.tokenBytes = Buffer.from(this.tokenText);
  }

  /** The token that resumes the session once. */
  get token(): string {
    return this.tokenText;
  }

  /** Bytes held for the client (see `held`). */
  get bytes(): number {
    return this.held;
  }

  /** Replaces the token: the old one resumes nothing any more (a token is used once). */
  renew(): void {
    this.tokenText = newToken();
    this.tokenBytes = Buffer.from(this.tokenText);
  }

  /**
   * Whether `given` is the token, compared in constant time (the length, the same for every token,
   * is not a secret): a wrong token tells nothing of the right one by how long it took to refuse.
   */
  matches(given: string): boolean {
    const bytes = Buffer.from(given, 'utf8');
    return bytes.length === this.tokenBytes.length && timingSafeEqual(bytes, this.tokenBytes);
  }

  /**
   * Numbers `frame` and holds it until the client acknowledges it. Refused (`false`, nothing held) when
   * what is held already exceeds `maxBytes`: the session is then a slow consumer. The payload is kept
   * as its own copy when it is a view of a larger buffer (a mesh message's), which it would keep alive.
   */
  hold(frame: FrameToHold, maxBytes: number): boolean {
    if (this.held > maxBytes) return false;
    const kept: HeldFrame =
      frame.kind === 'error'
        ? { ...frame, seq: ++this.sent }
        : { ...frame, payload: own(frame.payload), seq: ++this.sent };
    this.frames.push(kept);
    this.held += sizeOf(kept);
    return true;
  }

  /**
   * The client's Ack: every frame up to `received` reached it. An older count than one it gave before
   * changes nothing; `false` when it acknowledges frames never made (a broken client).
   */
  ack(received: number): boolean {
    if (received > this.sent) return false;
    if (received <= this.acked) return true;
    this.acked = received;
    const { frames } = this;
    let at = this.head;
    while (at < frames.length && (frames[at] as HeldFrame).seq <= received) {
      this.held -= sizeOf(frames[at] as HeldFrame);
      frames[at++] = undefined as unknown as HeldFrame;
    }
    this.head = at;
    if (at === frames.length) {
      this.frames = [];
      this.head = 0;
    } else if (at > COMPACT_AFTER && at * 2 > frames.length) {
      this.frames = frames.slice(at);
      this.head = 0;
    }
    return true;
  }

  /**
   * Whether a client that says it received `received` frames can resume: not fewer than it
   * acknowledged (those are let go of), not more than were made.
   */
  canResumeFrom(received: number): boolean {
    return received >= this.acked && received <= this.sent;
  }

  /** The frames after `received`, oldest first: what a resume sends again. */
  after(received: number): HeldFrame[] {
    const out: HeldFrame[] = [];
    for (let at = this.head; at < this.frames.length; at++) {
      const f = this.frames[at] as HeldFrame;
      if (f.seq > received) out.push(f);
    }
    return out;
  }

  /** Lets go of everything held, and of the grace timer (the session ended). */
  clear(): void {
    clearTimeout(this.grace);
    this.grace = undefined;
    this.frames = [];
    this.head = 0;
    this.held = 0;
    this.pending.clear();
  }
}

function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

function own(payload: Uint8Array): Uint8Array {
  return payload.byteOffset === 0 && payload.byteLength === payload.buffer.byteLength
    ? payload
    : new Uint8Array(payload);
}

function sizeOf(f: HeldFrame): number {
  switch (f.kind) {
    case 'reply':
      return FRAME_OVERHEAD_BYTES + f.payload.length;
    case 'push':
      return FRAME_OVERHEAD_BYTES + f.payload.length + f.packet.length;
    case 'error':
      return FRAME_OVERHEAD_BYTES + f.code.length + f.message.length;
  }
}
