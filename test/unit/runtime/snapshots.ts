import type { ZLinkSnapshot } from '../../../lib/runtime/snapshot.js';

/** A runtime's snapshot with nothing in it, but for `parts`: what the health rules read. */
export function snapshot(parts: Partial<ZLinkSnapshot> = {}): ZLinkSnapshot {
  return {
    channels: [],
    meshes: [],
    fanout: [],
    pendingRequests: 0,
    lateReplies: 0,
    activeHandlers: 0,
    ...parts,
  };
}
