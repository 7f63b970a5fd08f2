import { Buffer } from 'node:buffer';
import process from 'node:process';
import { randomBytes } from 'node:crypto';
import type { Router } from 'zeromq';
import { connectTo, connectionId } from '../io/index.js';
import type { OutboundLink } from './peer-table.js';

/**
 * Connects an outbound link from the node's ROUTER, to the peer holding `serverKey` when the mesh
 * speaks CURVE. Two names are fresh for every connect, and neither can be guessed:
 *
 * - the routing id the peer sees (`connectionId`): a NodeRid is never a routing id, so a stranger
 *   that announces one takes nothing over (the peer routes this connection to our NodeRid only once
 *   our hello is proven);
 * - our local name of the connection, `ep:<attempt>.<random>:<endpoint>` (see `OutboundLink`): an
 *   accepted connection announcing the name we are about to give a connect would make libzmq abort
 *   on that connect (a connect may not reuse a routing id in use), or take our link's name over.
 */
export function connectLink(router: Router, link: OutboundLink, serverKey?: string): void {
  link.attempt++;
  link.pipe = Buffer.from(`ep:${link.attempt}.${randomBytes(9).toString('base64url')}:${link.endpoint}`);
  // zeromq.js warns that an option set after bind waits for the next connect — which is exactly
  // what these are for.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    const routingId = link.pipe.toString('utf8');
    router.routingId = connectionId();
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

/**
 * The node's outbound links on its one ROUTER: connect, disconnect, and a fresh connection in place
 * of one that failed. A connect presents the key known for the endpoint at that moment (with CURVE),
 * so a restart after a refused handshake tries the peer's next key.
 */
export class LinkSockets {
  constructor(
    private readonly router: Router,
    private readonly serverKey: (endpoint: string) => string | undefined,
    private readonly isClosed: () => boolean,
  ) {}

  connect(link: OutboundLink): void {
    connectLink(this.router, link, this.serverKey(link.endpoint));
  }

  disconnect(link: OutboundLink): void {
    disconnectLink(this.router, link);
  }

  /** A fresh connection for `link`; nothing once the node has closed. */
  restart(link: OutboundLink): void {
    if (this.isClosed()) return;
    disconnectLink(this.router, link);
    this.connect(link);
  }
}
