/**
 * A send or request on its way to a target, built in the caller's turn: the deadline checked, payload
 * and metadata encoded once, and the caller's trace context as the encoded framework field. Every send
 * path takes this shape (channel and Node direct submissions, calls by global id).
 */
export interface EncodedCall {
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  /** The encoded framework field (the caller's trace context), or `undefined`: the record has none. */
  readonly trace: Uint8Array | undefined;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}
