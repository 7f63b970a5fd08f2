/** What the rooms processes share: their one object mesh `rooms`, found through the demo's Location Store. */
import type { ZLinkOptions } from '../../lib/index.js';

/** What a room answers to `state`: where it runs, who is in it and how many chat lines it took. */
export interface RoomState {
  room: string;
  server: string;
  topic: string;
  members: number;
  chats: number;
}

/** Where the players' game clients connect on the gateway (the session listener's name). */
export const PLAYERS_LISTENER = 'players';

/**
 * The options of a rooms process: NodeRid `rid` on mesh `rooms` with `objectRole`, discovery through
 * the Location Store at ZLINK_DEMO_STORE (moves recorded beside it). Throws without it: Spots keep
 * their records there. The gateway (`objectRole: 'client'`) also takes the players' TCP connections.
 */
export function roomsOptions(rid: string, objectRole: 'server' | 'client'): ZLinkOptions {
  const store = process.env.ZLINK_DEMO_STORE;
  if (!store)
    throw new Error(`${rid} needs ZLINK_DEMO_STORE: Spots keep their records in the Location Store`);
  return {
    locationStore: { redis: store, keyPrefix: 'demo', fullReadIntervalMs: 1000 },
    relocationStore: { redis: store, keyPrefix: 'demo-moves' },
    meshes: { rooms: { rid, objectRole, discovery: 'auto', listen: { port: 0, bindHost: '127.0.0.1' } } },
    ...(objectRole === 'client' && {
      sessions: { [PLAYERS_LISTENER]: { mesh: 'rooms', listen: { bindHost: '127.0.0.1', port: 0 } } },
    }),
    requestTimeoutMs: 5000,
  };
}
