// End-user sessions on the object layer (DESIGN §7 "Sessions"): the Session owner's host (admission,
// ordered turns, hooks, bindings, relays) and the bound Actor's owner side (binds, tombstones, ends).
export { SessionHost, type SessionHostConfig } from './session-host.js';
export type { SessionObjects, SessionSink } from './session-objects.js';
export { answerSessionBind, answerSessionUnbind, bindHere, runtimeCall } from './owner-bindings.js';
export { SESSION_CLOSED_PACKET, endPayload, heldRouteValue, sessionTurns } from './session-turns.js';
export {
  type SessionGlueDeps,
  answerSessionSeal,
  bindingPusher,
  moveSessions,
  runEnded,
  sessionObjects,
} from './session-glue.js';
