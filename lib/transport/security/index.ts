/**
 * CURVE for every topology: the keyring a node serves and trusts, the ZAP handler that checks
 * incoming keys, the watch on refused handshakes, and which key an outbound connection presents.
 */
export { type ChannelCurve, CurveKeyring, acceptedRefusals, reportConnectRefused } from './curve-keyring.js';
export { EndpointTrust, pickKey } from './endpoint-trust.js';
export { type HandshakeRefusal, refusalDetail, watchHandshakes } from './handshake-watch.js';
export { registerZap } from './zap-handler.js';
