import type { Router } from 'zeromq';
import { connectTo } from '../sockets.js';
import type { OutboundLink } from './peer-table.js';

/**
 * Connects an outbound link from the node's ROUTER under a fresh pipe name (see `OutboundLink`), to
 * the peer holding `serverKey` when the mesh speaks CURVE.
 */
export function connectLink(router: Router, link: OutboundLink, serverKey?: string): void {
  link.attempt++;
  link.pipe = Buffer.from(`ep:${link.attempt}:${link.endpoint}`, 'utf8');
  // zeromq.js warns that an option set after bind waits for the next connect — which is exactly
  // what this one is for.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    const routingId = link.pipe.toString('utf8');
    connectTo(router, serverKey, () => router.connect(link.endpoint, { routingId }));
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
