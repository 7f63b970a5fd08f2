import type { ObjectKind } from '../../core/kinds.js';
import type { EncodedCall } from '../../core/wire/index.js';
import type { MessageKind } from '../../core/calls/index.js';
import type { SessionStamp } from '../wire/index.js';

/**
 * One call by global id, as the runtime hands it over: payload and metadata encoded once, in the caller's
 * turn.
 */
export interface ObjectSubmission extends EncodedCall {
  readonly messageKind: MessageKind;
  readonly objectKind: ObjectKind;
  readonly id: string;
  /** Instance intent (`toSpot(id).instance(type, init)`): a Missing Spot is created, then called. */
  readonly instance?: { readonly type: string; readonly init: unknown };
  /**
   * A request's reply as its payload's msgpack bytes, not its value (a session relay hands it to the
   * client as it came: `PendingOptions.raw`).
   */
  readonly rawReply?: boolean;
  /** A session's relay over its binding route: the stamp, and its bytes as the record carries them. */
  readonly session?: { readonly stamp: SessionStamp; readonly bytes: Uint8Array };
}

/**
 * Names a call in its error messages ("request spot 'room-1'/join"), built only when an error needs
 * it: a call that succeeds never makes the string.
 */
export class CallName {
  constructor(private readonly sub: ObjectSubmission) {}

  toString(): string {
    const { messageKind, objectKind, id, packet } = this.sub;
    return `${messageKind} ${objectKind} '${id}'/${packet}`;
  }
}
