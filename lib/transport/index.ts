export * from './client-server/index.js';
export { SocketPump, type SendableSocket } from './socket-pump.js';
export * from './route-mesh/index.js';
export * from './fanout/index.js';
export { admitThen, type Submission } from './admission.js';
export { CurveKeyring } from './security/curve-keyring.js';
export * from './stream/index.js';
