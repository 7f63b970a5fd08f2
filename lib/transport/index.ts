export * from './client-server/index.js';
export { SocketPump, type SendableSocket } from './socket-pump.js';
export * from './route-mesh/index.js';
export type { Submission } from './admission.js';
