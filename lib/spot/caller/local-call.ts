import { type WireError, REMOTE_CODES, errorMessage, fromObjectWireError } from '../../core/errors.js';
import { encodePayload } from '../../core/wire/index.js';
import type { ObjectTypeMetrics, ZLinkEvents } from '../../core/observe/index.js';
import type { PendingRequests } from '../../core/calls/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import { type CallsElsewhere, type ObjectHost, reportSendFailure } from '../owner/index.js';
import type { ReadyRoute, RouteCache } from '../resolve/index.js';
import type { CallName, ObjectSubmission } from './object-submission.js';

/**
 * The pending-table route of calls answered in this process (never a peer's: a lost peer does not end them).
 */
const LOCAL_ROUTE = Symbol('local object calls');

/**
 * The owner side here, as a local call reaches it: the host's admission, and for an object that moved
 * away from this node, where its calls go now (as for a peer's call: Message Follow, a move arriving).
 */
export interface LocalOwner {
  readonly host: ObjectHost;
  readonly elsewhere: CallsElsewhere | undefined;
}

/** What a local call needs of its caller (the caller's config has it). */
export interface LocalCaller {
  readonly pending: PendingRequests;
  readonly events: ZLinkEvents;
  readonly mesh: string;
  readonly self: NodeRun;
  readonly cache: RouteCache;
}

/**
 * A call whose owner is this node: handed to the host as a remote one would be (same admission, handler,
 * metadata and completion contract, docs/protocol.md#resolving-a-global-id), without the mesh. The reply goes
 * through the codec as it would over the wire, so a handler sees and returns the same values wherever its
 * caller is. A send ends once the object's queue took it (its refusal comes back in the caller's turn, a
 * later failure is reported as a peer's would be); a request through the pending table (deadline, cancel,
 * shutdown: one terminal).
 */
export function localCall(
  caller: LocalCaller,
  owner: LocalOwner,
  route: ReadyRoute,
  sub: ObjectSubmission,
  operationId: string,
  timeoutMs: number,
  what: CallName,
  metrics: ObjectTypeMetrics,
): Promise<unknown> {
  const { pending, events, mesh } = caller;
  const selfRid = caller.self.rid;
  const call = {
    messageKind: sub.messageKind,
    objectKind: sub.objectKind,
    id: sub.id,
    fences: route,
    operationId,
    packet: sub.packet,
    metadata: sub.metadata,
    payload: sub.payload,
    // The handler runs in its own turn; a local caller's trace context is not carried across it.
    trace: undefined,
    sourceRid: selfRid,
    hops: 0,
    session: sub.session?.stamp,
  };
  if (sub.messageKind === 'send') {
    let refused: WireError | undefined;
    let queued = false;
    const inbound = { ...call, correlation: undefined, origin: undefined };
    owner.host.dispatch(
      inbound,
      {
        ok: () => undefined,
        // Its turn may run before `dispatch` returns: from its start, a failure is the handler's.
        accepted: () => (queued = true),
        error: (error) => {
          // After the send was queued nobody awaits it: reported, as a peer's send is on its owner.
          if (queued) reportSendFailure(events, mesh, selfRid, inbound, error);
          else refused = error;
        },
      },
      owner.elsewhere,
    );
    queued = true;
    return refused === undefined
      ? Promise.resolve()
      : Promise.reject(fromObjectWireError(refused, String(what)));
  }
  let opened: { correlation: number; result: Promise<unknown> };
  try {
    opened = pending.open({
      timeoutMs,
      signal: sub.signal,
      route: LOCAL_ROUTE,
      describe: what,
      metrics: metrics.calls,
      raw: sub.rawReply,
    });
  } catch (error) {
    return Promise.reject(error);
  }
  const { correlation } = opened;
  owner.host.dispatch(
    { ...call, correlation, origin: caller.self },
    {
      ok: (value) => {
        // Through the codec, as a remote reply: the caller gets what it would get from a peer.
        let bytes: Uint8Array;
        try {
          bytes = encodePayload(value);
        } catch (error) {
          const message = `reply could not be encoded: ${errorMessage(error)}`;
          pending.reject(correlation, (d) =>
            fromObjectWireError({ code: REMOTE_CODES.handlerError, message }, d),
          );
          return;
        }
        pending.resolveEncoded(correlation, bytes);
      },
      error: (error) => {
        // A stale answer drops exactly the cache entry the call was sent on.
        if (error.code === 'ObjectStale') caller.cache.invalidateStale(sub.objectKind, sub.id, route);
        pending.reject(correlation, (d) => fromObjectWireError(error, d));
      },
    },
    owner.elsewhere,
  );
  return opened.result;
}
