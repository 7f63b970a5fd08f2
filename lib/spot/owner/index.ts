// The owner side of the object layer: the activations this object server hosts, their turns and
// timers, the authority each holds, and the calls that reach them. Other rooms enter only here.
export type { ActorBinding, BindingPusher } from './activation-sessions.js';
export type { MemberSessions, RoomPusher } from './spot-sessions.js';
export type { ActivationWatch } from './activation-table.js';
export {
  type Activation,
  type HeldAuthority,
  type ObjectPublisher,
  heldRoute,
  objectRef,
} from './activation.js';
export { fencedRefusal } from './authority-claims.js';
export { userCode, within } from './user-code.js';
export { inboundCall, readCallRecord } from './inbound-call.js';
export type { CallsElsewhere, InboundObjectCall, ObjectAnswer, SpotEventStamp } from './object-call.js';
export { runObjectCall } from './object-dispatch.js';
export { ObjectHost, type ObjectHostConfig } from './object-host.js';
export type { DurableClass } from './object-states.js';
export { refusal, staleRef, staleRoute } from './refusals.js';
export { remoteAnswer, reportSendFailure } from './remote-answer.js';
export { runtimeCallRunner, type RuntimeTurnBuilder } from './runtime-turns.js';
