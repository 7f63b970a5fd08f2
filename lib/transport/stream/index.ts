export { SessionListener, type SessionListenerConfig } from './session-listener.js';
