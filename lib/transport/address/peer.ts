import type { AddressFamily, RemoteAddress } from '../../core/kinds.js';

/** What a Node socket tells of its far end (`net.Socket`, `tls.TLSSocket`, an upgrade request's socket). */
export interface PeerSocket {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  readonly remoteFamily?: string | undefined;
}

/**
 * The socket's peer, as Node reports it at the accept (a dual-stack socket's IPv4 peer as
 * `::ffff:a.b.c.d`); `undefined` once the connection is gone (Node then reports none), which a
 * listener takes as a connection that ended before it was served.
 */
export function socketAddressOf(socket: PeerSocket): RemoteAddress | undefined {
  const { remoteAddress: address, remotePort: port, remoteFamily: family } = socket;
  if (address === undefined || port === undefined || (family !== 'IPv4' && family !== 'IPv6'))
    return undefined;
  return { address, port, family: family as AddressFamily };
}
