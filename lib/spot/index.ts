// The object layer (DESIGN §7): Spots and Actors by global id. Reaches the mesh and the store only
// through core's ports; the runtime wires it. Not part of the public barrel yet.
export * from './execution/index.js';
export * from './resolve/index.js';
