// The object layer (DESIGN §7): Spots and Actors by global id. Reaches the mesh and the store only
// through core's ports; the runtime wires it.
export * from './execution/index.js';
export * from './resolve/index.js';
export * from './relocation/index.js';
export { ObjectLayer } from './layer/object-layer.js';
export type { ObjectLayerConfig, CreateOptions } from './layer/object-layer-config.js';
export { advertisedType } from './owner/placement.js';
export type { ObjectSubmission } from './caller/object-submission.js';
export type { MemberTarget } from './membership/memberships.js';
export * from './session/index.js';
