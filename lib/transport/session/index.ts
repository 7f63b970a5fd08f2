/**
 * What every session listener shares, whatever its socket: a connection's framing and protocol
 * states, and the listener's rules (accepts, writes against `maxPendingBytes`, timeouts, drain).
 */
export { type ConnectionHost, SessionConnection } from './session-connection.js';
export {
  type SessionCount,
  type SessionListenerConfig,
  type SessionListening,
  SessionListenerBase,
  sessionUrl,
} from './session-listener-base.js';
export { resetSocket } from './node-socket.js';
