export { SessionListener } from './session-listener.js';
