export { MeshNode, type MeshNodeConfig } from './mesh-node.js';
export type { OutboundLink, Peer, PeerRoute } from './peer-table.js';
