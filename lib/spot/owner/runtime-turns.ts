import { ZLinkError, toObjectWireError } from '../../core/errors.js';
import { OBJECT_FLUSH_PACKET } from '../../core/objects/index.js';
import { isHandedOff } from '../execution/index.js';
import type { Activation } from './activation.js';
import type { InboundObjectCall, ObjectAnswer } from './object-call.js';
import type { RuntimeCallRunner } from './object-dispatch.js';

/**
 * What one side of the object layer does with a runtime packet it owns (a membership change, a
 * session's end): the turn to run, the refusal to answer before it queues, or `undefined` when the
 * packet is not this side's.
 */
export type RuntimeTurnBuilder = (
  a: Activation,
  call: InboundObjectCall,
) => (() => unknown) | ZLinkError | undefined;

/**
 * Runs the runtime's own packets on their owner, each side's by its builder: a flush is answered as it
 * is admitted; every other packet becomes one turn of the object, answered with what it returns. The
 * runtime's own refusals keep their codes; what a hook threw arrives as `RemoteError` (`userCode`). A
 * packet no side takes is a `ProtocolError`.
 */
export function runtimeCallRunner(builders: readonly RuntimeTurnBuilder[]): RuntimeCallRunner {
  return (a, call, answer, carried) => {
    if (call.packet === OBJECT_FLUSH_PACKET) return answer.ok(null);
    let turn: (() => unknown) | ZLinkError | undefined;
    for (const build of builders) if ((turn = build(a, call)) !== undefined) break;
    turn ??= new ZLinkError(
      'ProtocolError',
      `${call.packet} to ${a.key.kind} '${a.key.id}': no such runtime packet`,
    );
    if (turn instanceof ZLinkError) return answer.error(toObjectWireError(turn));
    submitRuntimeTurn(a, call, answer, carried, turn);
  };
}

function submitRuntimeTurn(
  a: Activation,
  call: InboundObjectCall,
  answer: ObjectAnswer,
  carried: boolean,
  turn: () => unknown,
): void {
  let started = false;
  a.turns.submitThen(
    () => {
      started = true;
      return turn();
    },
    { oneWay: call.messageKind === 'send', work: call, carried },
    (result) => answer.ok(result),
    (error: unknown) => {
      if (!started && isHandedOff(error)) return;
      answer.error(toObjectWireError(error));
    },
  );
}
