export * from './client-server/index.js';
export { SocketPump, type SendableSocket } from './io/index.js';
export * from './route-mesh/index.js';
export * from './fanout/index.js';
export { admitThen, type Submission } from './outbound/index.js';
export { CurveKeyring } from './security/index.js';
export type { SessionCount, SessionListenerConfig, SessionListening } from './session/index.js';
export * from './net/index.js';
export * from './websocket/index.js';
