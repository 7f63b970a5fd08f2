import { REMOTE_CODES, ZLinkError, toObjectWireError, toWireError } from '../../core/errors.js';
import { type TracePropagation, decodeMetadata, decodePayload } from '../../core/wire/index.js';
import { type ZLinkObjectContext, isRuntimePacket } from '../../core/objects/index.js';
import { type TurnJob, isHandedOff } from '../execution/index.js';
import type { Activation } from './activation.js';
import type { InboundObjectCall, ObjectAnswer } from './object-call.js';

export type { CallsElsewhere, InboundObjectCall, ObjectAnswer } from './object-call.js';

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
  // A session's binding is to one incarnation: a relay for an older one (the Actor was destroyed and
  // created again under its id, on this same route) never runs on this one, which nobody bound.
  if (call.session !== undefined && call.fences.objectGeneration !== a.authority.objectGeneration)
    return answer.error(toObjectWireError(bindingEnded(a, call)));
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
    state: scope.state,
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
  // A refusal is answered at once (a send's in its sender's turn: a queued send is "done"); a handler
  // that answers with a plain value is answered in the turn that ran it.
  a.turns.submitJob(
    new CallTurn(a, call, answer, a.handler(handler.method), payload.value, context, deps.tracing, carried),
  );
}

/**
 * A relay whose binding ended with the incarnation it was made to: `Unavailable`, `reason:
 * 'bindingEnded'` (the Session owner then ends the binding: docs/sessions.md#when-a-binding-ends).
 */
function bindingEnded(a: Activation, call: InboundObjectCall): ZLinkError {
  const bound = call.fences.objectGeneration;
  const now = a.authority.objectGeneration;
  return new ZLinkError(
    'Unavailable',
    `actor '${a.key.id}' was destroyed and created again (generation ${now}; the session was bound to ` +
      `generation ${bound}): the binding ended with the old incarnation; bind the new one`,
    { details: { reason: 'bindingEnded', actorId: a.key.id, objectGeneration: now, boundGeneration: bound } },
  );
}

/**
 * One call as its object's turn, with both outcomes: one object per call (its methods shared), not a
 * turn closure, two outcome closures and an options object.
 */
class CallTurn implements TurnJob<InboundObjectCall> {
  readonly oneWay: boolean;
  /** What ends the call before its turn started is the queue's refusal; after, the handler's outcome. */
  private started = false;

  constructor(
    private readonly a: Activation,
    readonly work: InboundObjectCall,
    private readonly answer: ObjectAnswer,
    private readonly fn: (value: unknown, context: ZLinkObjectContext) => unknown,
    private readonly value: unknown,
    private readonly context: ZLinkObjectContext,
    private readonly tracing: TracePropagation | undefined,
    readonly carried: boolean,
  ) {
    this.oneWay = work.messageKind === 'send';
  }

  run(): unknown {
    this.started = true;
    this.answer.accepted?.();
    const { event, trace } = this.work;
    // Checked as it runs, not as it queues: a copy queued first still yields to one that runs first.
    if (event !== undefined && this.a.eventOrder?.takes(event.publisherGeneration, event.seq) === false)
      return SKIPPED;
    const { fn, value, context, tracing } = this;
    return trace === undefined || tracing === undefined
      ? fn(value, context)
      : tracing.run(trace, () => fn(value, context));
  }

  resolve(result: unknown): void {
    if (result === SKIPPED) return this.answer.skipped?.();
    this.a.metrics.handled++;
    const d = this.a.durable;
    // Every-turn persistence: the answer waits until the store took the state its turn left
    // (docs/objects.md#durable-objects), so no caller hears of a turn a crash could still undo.
    if (d?.holdsReplies === true)
      return d.after(d.current, () => this.answer.ok(result), this.answer.error.bind(this.answer));
    this.answer.ok(result);
  }

  reject(error: unknown): void {
    // Handed off with its object to the new owner, which answers it on the call's reply route.
    if (!this.started && isHandedOff(error)) return;
    if (!this.started) return this.answer.error(toObjectWireError(error));
    this.a.metrics.handled++;
    const wire = toWireError(error);
    const d = this.a.durable;
    if (d?.holdsReplies === true)
      return d.after(d.current, () => this.answer.error(wire), this.answer.error.bind(this.answer));
    this.answer.error(wire);
  }
}
