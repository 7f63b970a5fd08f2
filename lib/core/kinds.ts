/** What an object is: a Spot (a room, a match) or an Actor (usually one user). */
export type ObjectKind = 'spot' | 'actor';

/**
 * Spots and Actors (`client` / `server`) need a Location Store; `none` is a plain MeshNode.
 * @default 'none'
 */
export type ObjectRole = 'none' | 'client' | 'server';
