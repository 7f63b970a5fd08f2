/**
 * The room that touches zeromq: the one socket factory, the send pump, the receive helpers and the
 * endpoint strings. Every other room reaches a socket only through here.
 */
export { ListenAddress } from './endpoints.js';
export { ReadProgress, afterQueuedReads, hasFrames, nextMessage } from './receive.js';
export { type SendableSocket, SocketPump } from './socket-pump.js';
export {
  type SocketCurve,
  clientDealer,
  connectTo,
  connectionId,
  listenerRouter,
  meshRouter,
  publisherSocket,
  subscriberSocket,
  zapRouter,
} from './sockets.js';
