/**
 * What happens to a received business record: a send or request passes the gate (draining, fenced,
 * job permits) and runs its handler, which answers; a reply settles the request that waits for it.
 */
export { InboundGate } from './inbound-gate.js';
export { type InboundMessage, type InboundScope, channelScope, failInbound, nodeScope } from './inbound.js';
export { dropUnmatchedReply, settleReply } from './replies.js';
