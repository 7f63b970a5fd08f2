import type { NodeRun, PeerAddress } from '../../core/index.js';
import type { ObjectRequestRecord, ObjectSendRecord } from '../wire/index.js';
import type { InboundObjectCall, ObjectAnswer } from '../owner/object-call.js';
import type { ObjectHost } from '../owner/object-host.js';
import type { MessageFollow, Relocations } from '../relocation/index.js';

/**
 * Where a call on a route this node no longer holds goes, for a local caller and a peer's alike: an
 * object arriving here takes it once it is in (`holdArriving`), else it follows its object (Message
 * Follow). Written once for both paths; the host asks only after refusing the route.
 */
export class MovedCalls {
  constructor(
    private readonly host: ObjectHost,
    private readonly follow: MessageFollow,
    private readonly relocations: Relocations | undefined,
    private readonly self: NodeRun,
  ) {}

  /**
   * What the host tries for `call` when it holds no such route, or `undefined` while nothing moves
   * (no closure is made per call then). A peer's call passes its record and sender, so a relay
   * forwards its bytes as they came; a local one is encoded for the relay.
   */
  elsewhere(
    call: InboundObjectCall,
    answer: ObjectAnswer,
    record?: ObjectSendRecord | ObjectRequestRecord,
    from?: PeerAddress,
  ): (() => boolean) | undefined {
    if (!this.follow.active && !this.host.moves.anyArriving) return undefined;
    return () =>
      this.relocations?.holdArriving(call, answer) === true ||
      (record === undefined || from === undefined
        ? this.follow.takeCall(call, this.self, answer)
        : this.follow.take(record, from, answer));
  }
}
