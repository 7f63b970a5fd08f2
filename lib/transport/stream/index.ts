export {
  SessionListener,
  type SessionListenerConfig,
  type SessionListenerSnapshot,
} from './session-listener.js';
