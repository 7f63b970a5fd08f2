import { ZLinkError } from '../../core/errors.js';
import type { ObjectTypeMetrics } from '../../core/observe/index.js';
import { type CallSink, type PendingRequests, RESOLVED } from '../../core/calls/index.js';
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
 * A send to an owner peer that is ready (docs/protocol.md#resolving-a-global-id): `RESOLVED` once
 * queued for it, else the wait for queue space within the deadline. A request goes by `remoteRequest`.
 */
export function remoteSend(
  caller: RemoteCaller,
  route: ReadyRoute,
  sub: ObjectSubmission,
  operationId: OperationId,
  deadline: number,
  what: CallName,
): Promise<unknown> {
  const { packet, metadata, payload, trace } = sub;
  const to = { rid: route.owner.rid, generation: route.owner.nodeGeneration };
  const session = sub.session?.bytes;
  const bytes = encodeObjectSend(route.address, operationId, packet, metadata, payload, trace, 0, session);
  return offer(caller, to, bytes, deadline, sub.signal, what) ?? RESOLVED;
}

/**
 * A request to an owner peer that is ready: its reply, its error reply or the pending table's own
 * terminal (timeout, cancel, the peer lost) goes to `sink`, once. A refusal goes there too: nothing is
 * thrown.
 */
export function remoteRequest(
  caller: RemoteCaller,
  route: ReadyRoute,
  sub: ObjectSubmission,
  operationId: OperationId,
  deadline: number,
  now: number,
  what: CallName,
  m: ObjectTypeMetrics,
  sink: CallSink,
): void {
  const { self, pending } = caller;
  let correlation: number;
  try {
    correlation = pending.openTo(
      {
        timeoutMs: Math.max(1, deadline - now),
        signal: sub.signal,
        route: route.owner.rid,
        describe: what,
        metrics: m.calls,
        raw: sub.rawReply,
      },
      sink,
    );
  } catch (error) {
    sink.reject(error);
    return;
  }
  const bytes = encodeObjectRequest(
    correlation,
    self,
    route.address,
    operationId,
    sub.packet,
    sub.metadata,
    sub.payload,
    sub.trace,
    0,
    sub.session?.bytes,
  );
  const to = { rid: route.owner.rid, generation: route.owner.nodeGeneration };
  offer(caller, to, bytes, deadline, sub.signal, what)?.catch((error: unknown) =>
    pending.reject(
      correlation,
      error instanceof ZLinkError ? error : new ZLinkError('RouteError', `${what}: ${String(error)}`),
    ),
  );
}
