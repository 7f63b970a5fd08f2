// The object layer (DESIGN §7): Spots and Actors by global id. Reaches the mesh and the store only
// through core's ports; the runtime wires it.
export * from './execution/index.js';
export * from './resolve/index.js';
export * from './relocation/index.js';
export { ObjectLayer, advertisedType, type ObjectLayerConfig, type CreateOptions } from './object-layer.js';
export type { ObjectSubmission } from './calls/object-submission.js';
