import { MAX_MESSAGE_BYTES } from '../socket-limits.js';
import { Router } from 'zeromq';
import type { OutboundLink } from './peer-table.js';

/**
 * ZMTP heartbeats on every peer connection, with no zeromq timeout: a connection always carries
 * traffic, so TCP itself ends one to a host that is gone (at its retransmission timeout). A silent
 * peer is the MeshNode's to judge, by its pings within 3 s (see `MeshNode.tick`): zeromq reads
 * nothing on a connection whose queue to us is full — our handlers are busy, backpressure — so the
 * peer's answers to our PINGs sit unread, and a zeromq timeout would cut a healthy peer and every
 * record still on the way.
 */
const HEARTBEAT_INTERVAL_MS = 1000;

/** A MeshNode's one ROUTER: routing id = NodeRid, observed from before it binds. */
export function newMeshRouter(rid: string, ipv6: boolean): Router {
  const router = new Router({
    routingId: rid,
    // A send to a pipe that is gone fails (EHOSTUNREACH) instead of vanishing: the peer is lost.
    mandatory: true,
    // A peer that reconnects under its NodeRid takes its name over at once.
    handover: true,
    linger: 0,
    ipv6,
    maxMessageSize: MAX_MESSAGE_BYTES,
    heartbeatInterval: HEARTBEAT_INTERVAL_MS,
    heartbeatTimeout: 0,
  });
  // The observer exists before bind: a peer may connect the moment the port is open, and an event
  // zeromq reports before anyone observes the socket is lost.
  void router.events;
  return router;
}

/** Connects an outbound link from the node's ROUTER under a fresh pipe name (see `OutboundLink`). */
export function connectLink(router: Router, link: OutboundLink): void {
  link.attempt++;
  link.pipe = Buffer.from(`ep:${link.attempt}:${link.endpoint}`, 'utf8');
  // zeromq.js warns that an option set after bind waits for the next connect — which is exactly
  // what this one is for.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    router.connect(link.endpoint, { routingId: link.pipe.toString('utf8') });
  } finally {
    process.emitWarning = emitWarning;
  }
}

export function disconnectLink(router: Router, link: OutboundLink): void {
  // zeromq reports no disconnect for a connection we close ourselves.
  link.connected = false;
  try {
    router.disconnect(link.endpoint);
  } catch {
    // Not connected (already disconnected, or the socket is closing).
  }
}
