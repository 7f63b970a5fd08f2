import type { MessageKind, ObjectKind } from '../../core/index.js';

/** One call by global id, as the runtime hands it over: payload and metadata encoded once, in the caller's turn. */
export interface ObjectSubmission {
  readonly messageKind: MessageKind;
  readonly objectKind: ObjectKind;
  readonly id: string;
  readonly packet: string;
  readonly metadata: Uint8Array | undefined;
  readonly payload: Uint8Array;
  /** The caller's trace context as the encoded framework field (`TracePropagation.inject()`). */
  readonly trace: Uint8Array | undefined;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** Instance intent (`toSpot(id).instance(type, init)`): a Missing Spot is created, then called. */
  readonly instance?: { readonly type: string; readonly init: unknown };
}
