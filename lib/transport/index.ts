export * from './client-server/index.js';
export { SocketPump, type SendableSocket } from './socket-pump.js';
