/** What an object is: a Spot (a room, a match) or an Actor (usually one user). */
export type ObjectKind = 'spot' | 'actor';

/**
 * Spots and Actors (`client` / `server`) need a Location Store; `none` is a plain MeshNode.
 * @default 'none'
 */
export type ObjectRole = 'none' | 'client' | 'server';

/** How a client reached us: the families `node:net` names, and a UNIX socket's path (behind a proxy). */
export type AddressFamily = 'IPv4' | 'IPv6' | 'unix';

/**
 * A client's address (docs/sessions.md#the-clients-address): the TCP peer, or behind a trusted proxy
 * the client it names. IPv4 as `a.b.c.d`, IPv6 as RFC 5952 writes it (a dual-stack socket's IPv4 peer
 * as `::ffff:a.b.c.d`, as Node reports it). `port` is undefined where none is known: a UNIX path, or
 * a forwarded hop written without one.
 */
export interface RemoteAddress {
  readonly address: string;
  readonly port: number | undefined;
  readonly family: AddressFamily;
}
