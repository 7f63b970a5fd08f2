/**
 * What a client keeps of a session it may resume (docs/sessions-wire.md#resume-after-a-drop), with no
 * timer and no socket: its own count of the server's Replies, Errors and Pushes (what its Acks and a
 * resume's Hello say), and the Requests and Sends it wrote that the server is not known to have taken
 * (what a resume sends again). The protocol (`session-machine.ts`) drives it. No Node built-in here.
 */

import type { SessionResumeState } from './session-api.js';

/** What a kept frame costs besides its body, toward the Ping that lets go of it. */
const FRAME_COST_BYTES = 64;

/**
 * A Ping goes out once this much has been kept since the last one (frames at their body plus
 * `FRAME_COST_BYTES`): its Pong lets go of all of it. So what is kept is at most what was written in
 * one round trip plus this (docs/sessions.md#resume-in-the-client).
 */
export const PING_AFTER_BYTES = 16 * 1024;

/** One Request or Send kept until the server is known to have taken it. */
export interface KeptFrame {
  /** Its number in the server's count of the client's Requests and Sends; a resume numbers it anew. */
  seq: number;
  /** The frame body as written (its own copy). */
  readonly body: Uint8Array;
  /** A Request's correlation; `undefined` for a Send. */
  readonly correlation: number | undefined;
}

/**
 * The resume bookkeeping of one session. The server is known to have taken every frame up to a
 * number when a Request of that number is answered (it takes frames in order), when the Pong to a
 * Ping written after it comes (it answers a Ping when it reads it, behind what came before), or when a
 * resume's Welcome gives its count.
 */
export class ResumeLedger {
  /** Replies, Errors and Pushes received over the session's whole life (the client's count). */
  received: number;
  /** The count the server last heard (an Ack, or a resume's Hello). */
  private acked: number;
  /** Requests and Sends numbered so far. */
  private sent = 0;
  /** Every frame up to this number was taken by the server. */
  private taken = 0;
  /** Frames numbered above `taken`, oldest first. */
  private kept: KeptFrame[] = [];
  /** For each Ping of this connection not yet answered, `sent` when it went. */
  private marks: number[] = [];
  /** What was kept since the last Ping. */
  private unmarked = 0;

  constructor(
    readonly sessionId: string,
    /** The token of the next resume (secret: never logged). */
    public token: string,
    /** The server's grace, in ms. */
    public graceMs: number,
    received = 0,
  ) {
    this.received = received;
    this.acked = received;
  }

  /** The ledger of a session saved by another client (`resumeFrom`): its grace is what is left of it. */
  static from(state: SessionResumeState): ResumeLedger {
    return new ResumeLedger(
      state.sessionId,
      state.token,
      Math.max(0, state.until - Date.now()),
      state.received,
    );
  }

  /**
   * What resumes this session from another client: `until` the end of its grace, as this side counts
   * it (by default a grace from now: the session is connected).
   */
  state(nextCorrelation: number, until = Date.now() + this.graceMs): SessionResumeState {
    return { sessionId: this.sessionId, token: this.token, received: this.received, nextCorrelation, until };
  }

  /** Frames kept for a resume, and their bytes (bodies only). */
  get keeping(): { readonly frames: number; readonly bytes: number } {
    let bytes = 0;
    for (const f of this.kept) bytes += f.body.length;
    return { frames: this.kept.length, bytes };
  }

  /** Numbers a Request (with its correlation) or a Send just written, and keeps it. */
  keep(body: Uint8Array, correlation: number | undefined): KeptFrame {
    const f: KeptFrame = { seq: ++this.sent, body, correlation };
    this.kept.push(f);
    this.unmarked += body.length + FRAME_COST_BYTES;
    return f;
  }

  /** Whether enough was kept since the last Ping that one should go now. */
  get pingDue(): boolean {
    return this.unmarked >= PING_AFTER_BYTES;
  }

  /** A Ping was written: its Pong will say every frame numbered so far was taken. */
  pinged(): void {
    this.marks.push(this.sent);
    this.unmarked = 0;
  }

  /** A Pong: the oldest Ping not yet answered is. */
  ponged(): void {
    const mark = this.marks.shift();
    if (mark !== undefined) this.took(mark);
  }

  /** The answer to the Request `f`: it, and every frame before it, was taken. */
  answered(f: KeptFrame): void {
    this.took(f.seq);
  }

  /** The count to acknowledge, when it moved since the server last heard it. */
  ackDue(): number | undefined {
    if (this.received <= this.acked) return undefined;
    return (this.acked = this.received);
  }

  /** A resume's Hello item, `[sessionId, token, received]`; the count in it is acknowledged by it. */
  resumeAsk(): [string, string, number] {
    this.acked = this.received;
    return [this.sessionId, this.token, this.received];
  }

  /** The connection ended: the Pings on it will never be answered. */
  connectionLost(): void {
    this.marks = [];
  }

  /**
   * The resumed Welcome: the server took `received` of the client's frames, and gives a new token.
   * Returns the frames to send again, in order, numbered on from `received` (those `wanted` says are
   * still wanted: a Request already settled here, by its timeout, is not sent again); `undefined`
   * when the server counts fewer than it was known to have taken (a broken server).
   */
  resumed(
    received: number,
    token: string,
    graceMs: number,
    wanted: (f: KeptFrame) => boolean,
  ): KeptFrame[] | undefined {
    if (!Number.isInteger(received) || received < this.taken) return undefined;
    this.took(received);
    this.token = token;
    this.graceMs = graceMs;
    this.kept = this.kept.filter(wanted);
    this.sent = received;
    this.unmarked = 0;
    for (const f of this.kept) {
      f.seq = ++this.sent;
      this.unmarked += f.body.length + FRAME_COST_BYTES;
    }
    return this.kept;
  }

  /** Every frame up to `seq` was taken: let go of them. */
  private took(seq: number): void {
    if (seq <= this.taken) return;
    this.taken = seq;
    let n = 0;
    while (n < this.kept.length && (this.kept[n] as KeptFrame).seq <= seq) n++;
    if (n > 0) this.kept.splice(0, n);
  }
}
