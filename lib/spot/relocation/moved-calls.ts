import type { NodeRun, PeerAddress } from '../../core/ports/index.js';
import type { CallsElsewhere, InboundObjectCall, ObjectAnswer, ObjectHost } from '../owner/index.js';
import type { MessageFollow } from './message-follow.js';
import type { Relocations } from './relocations.js';

/**
 * Where a call on a route this node no longer holds goes, for a local caller and a peer's alike: an
 * object arriving here takes it once it is in (`holdArriving`), else it follows its object (Message
 * Follow). Written once for both paths; the host asks only after refusing the route.
 */
export class MovedCalls implements CallsElsewhere {
  constructor(
    private readonly host: ObjectHost,
    private readonly follow: MessageFollow,
    private readonly relocations: Relocations | undefined,
    private readonly self: NodeRun,
  ) {}

  take(call: InboundObjectCall, answer: ObjectAnswer, from?: PeerAddress): boolean {
    if (!this.follow.active && !this.host.moves.anyArriving) return false;
    return (
      this.relocations?.holdArriving(call, answer) === true ||
      this.follow.take(
        call,
        from === undefined ? this.self : { rid: from.rid, nodeGeneration: from.generation },
        answer,
      )
    );
  }
}
