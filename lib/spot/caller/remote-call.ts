import { ZLinkError } from '../../core/errors.js';
import type { ObjectTypeMetrics } from '../../core/observe/index.js';
import { type PendingRequests, RESOLVED } from '../../core/calls/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import { type OperationId, encodeObjectRequest, encodeObjectSend } from '../wire/index.js';
import type { ReadyRoute } from '../resolve/index.js';
import { type OfferConfig, offer } from './mesh-offer.js';
import type { CallName, ObjectSubmission } from './object-submission.js';

/** What a call to an owner peer needs of its caller (the caller's config has it). */
export interface RemoteCaller extends OfferConfig {
  readonly self: NodeRun;
  readonly pending: PendingRequests;
}

/**
 * A call whose owner is a ready peer (docs/protocol.md#resolving-a-global-id): a send queued for the
 * owner peer, or a request whose reply (or error reply) the pending table awaits.
 */
export function remoteCall(
  caller: RemoteCaller,
  route: ReadyRoute,
  sub: ObjectSubmission,
  operationId: OperationId,
  deadline: number,
  now: number,
  what: CallName,
  m: ObjectTypeMetrics,
): Promise<unknown> {
  const { self, pending } = caller;
  const to = { rid: route.owner.rid, generation: route.owner.nodeGeneration };
  const fields = sub.trace;
  const session = sub.session?.bytes;
  const { address } = route;
  if (sub.messageKind === 'send') {
    const { packet, metadata, payload } = sub;
    const bytes = encodeObjectSend(address, operationId, packet, metadata, payload, fields, 0, session);
    return offer(caller, to, bytes, deadline, sub.signal, what) ?? RESOLVED;
  }
  const opened = pending.open({
    timeoutMs: Math.max(1, deadline - now),
    signal: sub.signal,
    route: route.owner.rid,
    describe: what,
    metrics: m.calls,
    raw: sub.rawReply,
  });
  const bytes = encodeObjectRequest(
    opened.correlation,
    self,
    address,
    operationId,
    sub.packet,
    sub.metadata,
    sub.payload,
    fields,
    0,
    session,
  );
  offer(caller, to, bytes, deadline, sub.signal, what)?.catch((error: unknown) =>
    pending.reject(
      opened.correlation,
      error instanceof ZLinkError ? error : new ZLinkError('RouteError', `${what}: ${String(error)}`),
    ),
  );
  return opened.result;
}
