import { type WireError, REMOTE_CODES, errorMessage } from '../../core/errors.js';
import { encodePayload } from '../../core/wire/index.js';
import type { ZLinkEvents } from '../../core/observe/index.js';
import type { MeshLink } from '../../core/ports/index.js';
import type { ObjectRef } from '../../core/objects/index.js';
import {
  encodeObjectErrorReply,
  encodeObjectRefPayload,
  encodeObjectReply,
  encodeObjectStale,
} from '../wire/index.js';
import type { InboundObjectCall, ObjectAnswer } from './object-dispatch.js';

/**
 * The answer to a request from a peer: on the reply route the request carried (its origin NodeRid,
 * correlation and node generation), never by looking the requester up (docs/protocol.md#object-replies), and
 * past the send queue's bound. An origin that is gone loses its answer; nothing else is tried.
 * `ref`: the result is an `ObjectRef` (a control answer), sent in its own form.
 */
export function remoteAnswer(
  link: MeshLink,
  originRid: string,
  correlation: number,
  originGeneration: string,
  ref = false,
): ObjectAnswer {
  return new RemoteAnswer(link, originRid, correlation, originGeneration, ref);
}

/** One object per request answered (its methods shared), not a closure per outcome. */
class RemoteAnswer implements ObjectAnswer {
  constructor(
    private readonly link: MeshLink,
    private readonly originRid: string,
    private readonly correlation: number,
    private readonly originGeneration: string,
    private readonly ref: boolean,
  ) {}

  ok(value: unknown): void {
    let payload: Uint8Array;
    try {
      payload = this.ref ? encodeObjectRefPayload(value as ObjectRef) : encodePayload(value);
    } catch (error) {
      return this.error({
        code: REMOTE_CODES.handlerError,
        message: `reply could not be encoded: ${errorMessage(error)}`,
      });
    }
    this.link.answer(this.originRid, encodeObjectReply(this.correlation, this.originGeneration, payload));
  }

  error(error: WireError): void {
    this.link.answer(this.originRid, encodeObjectErrorReply(this.correlation, this.originGeneration, error));
  }
}

/**
 * The "answer" to a one-way send: nothing on success; a stale route is told to the sender so it drops
 * exactly that cache entry (ObjectStale); any other failure is reported and counted, as a failed
 * channel send is.
 */
export function sendAnswer(
  link: MeshLink,
  events: ZLinkEvents,
  mesh: string,
  fromRid: string,
  call: InboundObjectCall,
): ObjectAnswer {
  return {
    ok: () => undefined,
    error: (error) => {
      if (error.code === 'ObjectStale')
        link.answer(fromRid, encodeObjectStale(call.objectKind, call.id, call.fences));
      reportSendFailure(events, mesh, fromRid, call, error);
    },
  };
}

/**
 * A one-way send that failed on its owner after its sender was done with it (nobody awaits it): a
 * `delivery` event with the failure, counted per result as a failed channel send is. The same for a
 * sender in this process as for a peer.
 */
export function reportSendFailure(
  events: ZLinkEvents,
  mesh: string,
  fromRid: string,
  call: InboundObjectCall,
  error: WireError,
): void {
  events.emit({
    type: 'delivery',
    result:
      error.code === REMOTE_CODES.noHandler
        ? 'no_handler'
        : error.code === 'ObjectRefused'
          ? 'rejected'
          : 'handler_error',
    route: 'route-mesh',
    mesh,
    sourceRid: fromRid,
    kind: 'send',
    packet: call.packet,
    reason: `${call.objectKind} '${call.id}': ${error.message}`,
  });
}
