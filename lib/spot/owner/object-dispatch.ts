import {
  type TracePropagation,
  type ZLinkObjectContext,
  REMOTE_CODES,
  decodeMetadata,
  decodePayload,
  isRuntimePacket,
  toObjectWireError,
  toWireError,
} from '../../core/index.js';
import { isHandedOff } from '../execution/index.js';
import type { Activation } from './activation.js';
import type { InboundObjectCall, ObjectAnswer } from './object-call.js';

export type { InboundObjectCall, ObjectAnswer } from './object-call.js';

/**
 * Runs a call with one of the runtime's own packets (a flush, a membership change) on its owner. The
 * membership side provides it (`runRuntimeCall`): the owner knows only this shape, so hosting never
 * imports membership.
 */
export type RuntimeCallRunner = (
  a: Activation,
  call: InboundObjectCall,
  answer: ObjectAnswer,
  carried: boolean,
) => void;

/** What running a call needs besides the activation: the host's config has both. */
export interface DispatchDeps {
  readonly tracing: TracePropagation | undefined;
  readonly runtimeCall: RuntimeCallRunner;
}

/** What a turn returns that ran no handler: an event the Spot had run already (see `EventOrder`). */
const SKIPPED: unique symbol = Symbol('skipped event');

/**
 * Runs `call` on activation `a` as one turn: metadata and payload decoded first (a bad one is
 * answered at once and never queued), then the handler through the adapter, inside the call's trace
 * when tracing is on. What the handler throws travels as its own error (`toWireError`); a refusal of
 * the turn queue (full, closed, fenced, self-request) as the object layer's (`toObjectWireError`).
 * Answers exactly once; never throws.
 */
export function runObjectCall(
  a: Activation,
  call: InboundObjectCall,
  answer: ObjectAnswer,
  deps: DispatchDeps,
  /** A move carried it: accepted already, so past the queue limit. */
  carried = false,
): void {
  // The runtime's own (a flush, answered as it is admitted; a membership change): never a handler's.
  if (isRuntimePacket(call.packet)) return deps.runtimeCall(a, call, answer, carried);
  const { event } = call;
  // An event runs its subscription's method; any other call the handler of its packet.
  const handler =
    event === undefined
      ? a.handlers?.[call.messageKind].get(call.packet)
      : a.subscriptions?.get(event.info.channel)?.get(event.info.topic);
  if (handler === undefined) {
    return answer.error({
      code: REMOTE_CODES.noHandler,
      message:
        event === undefined
          ? `no ${call.messageKind} handler for '${call.packet}' on ${a.cls.kind} type '${a.cls.type}'`
          : `no subscription to '${event.info.channel}' topic '${event.info.topic}' on ${a.cls.kind} type '${a.cls.type}'`,
    });
  }
  const metadata = decodeMetadata(call.metadata);
  if (!metadata.ok) return answer.error({ code: REMOTE_CODES.badMetadata, message: metadata.reason });
  const payload = decodePayload(call.payload);
  if (!payload.ok)
    return answer.error({
      code: REMOTE_CODES.decodeError,
      message: `${call.objectKind} '${call.id}': ${payload.reason}`,
    });
  // Written out, not spread from the scope: this object is made for every call.
  const { scope } = a;
  const context: ZLinkObjectContext = {
    target: scope.target,
    type: scope.type,
    id: scope.id,
    objectGeneration: scope.objectGeneration,
    self: scope.self,
    timers: scope.timers,
    membership: scope.membership,
    sessions: scope.sessions,
    push: scope.sessions.push,
    publish: scope.publish,
    multicast: event?.info,
    session: call.session && {
      id: call.session.sessionId,
      listener: call.session.listener,
      ownerRid: call.session.ownerRid,
    },
    kind: call.messageKind,
    packet: call.packet,
    metadata: metadata.metadata,
    correlation: call.correlation,
    sourceRid: call.sourceRid,
  };
  const fn = a.handler(handler.method);
  const value = payload.value;
  const { trace } = call;
  const { tracing } = deps;
  // What ends the call before its turn started is the queue's refusal; after, the handler's outcome.
  let started = false;
  const turn = (): unknown => {
    started = true;
    answer.accepted?.();
    // Checked as it runs, not as it queues: a copy queued first still yields to one that runs first.
    if (event !== undefined && a.eventOrder?.takes(event.publisherGeneration, event.seq) === false)
      return SKIPPED;
    return trace === undefined || tracing === undefined
      ? fn(value, context)
      : tracing.run(trace, () => fn(value, context));
  };
  // A refusal is answered at once (a send's in its sender's turn: a queued send is "done"); a handler
  // that answers with a plain value is answered in the turn that ran it.
  a.turns.submitThen(
    turn,
    { oneWay: call.messageKind === 'send', work: call, carried },
    (result) => {
      if (result === SKIPPED) return answer.skipped?.();
      a.metrics.handled++;
      answer.ok(result);
    },
    (error: unknown) => {
      // Handed off with its object to the new owner, which answers it on the call's reply route.
      if (!started && isHandedOff(error)) return;
      if (!started) return answer.error(toObjectWireError(error));
      a.metrics.handled++;
      answer.error(toWireError(error));
    },
  );
}
