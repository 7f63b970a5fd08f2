// End-user sessions on the object layer (docs/architecture.md#sessions): the Session owner's host (admission,
// ordered turns, hooks, bindings, relays) and the bound Actor's owner side (binds, tombstones, ends).
export { SessionHost, type SessionHostConfig } from './session-host.js';
export {
  type SessionDeps,
  type SessionObjects,
  type SessionSink,
  sessionObjects,
} from './session-objects.js';
export { answerSessionBind, answerSessionUnbind } from './owner-bindings.js';
export { sessionTurns } from './session-turns.js';
export { answerSessionSeal, bindingPusher, moveSessions, runEnded } from './bound-actors.js';
