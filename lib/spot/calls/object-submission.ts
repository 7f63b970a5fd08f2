import type { EncodedCall, MessageKind, ObjectKind } from '../../core/index.js';

/** One call by global id, as the runtime hands it over: payload and metadata encoded once, in the caller's turn. */
export interface ObjectSubmission extends EncodedCall {
  readonly messageKind: MessageKind;
  readonly objectKind: ObjectKind;
  readonly id: string;
  /** Instance intent (`toSpot(id).instance(type, init)`): a Missing Spot is created, then called. */
  readonly instance?: { readonly type: string; readonly init: unknown };
}
