/**
 * The session listener for browsers: WebSocket (`ws`) on `node:http` or `node:https`, one binary
 * message per frame body, its upgrade refusals answered over HTTP and counted.
 */
export { WebSocketSessionListener } from './websocket-session-listener.js';
export { MAX_UPGRADE_HEADER_BYTES, WebSocketClose, webSocketCloseOf } from './upgrade-rules.js';
