// The object layer (docs/architecture.md#the-object-layer): Spots and Actors by global id. Reaches
// the mesh and the store only through core's ports; the runtime wires it. This is the layer's one
// door: what the runtime uses, by name, and the types its signatures name. The rooms behind it
// (timing < wire < execution < resolve < owner < multicast < relocation < caller < {membership,
// session} < the root files) meet only through their own index files.
export { ObjectLayer } from './object-layer.js';
export type { CreateOptions, ObjectLayerConfig } from './object-layer-config.js';
export type { ObjectSubmission } from './caller/index.js';
export type { MemberTarget } from './membership/index.js';
export type { MoveRequest, RelocationResult } from './relocation/index.js';
export {
  type Clock,
  type OwnerLeaseView,
  type ResolveResult,
  SYSTEM_CLOCK,
  advertisedType,
} from './resolve/index.js';
export { StateBatcher } from './durable/index.js';
export type { DurableClass } from './owner/index.js';
export { SessionHost, type SessionHostConfig, type SessionObjects } from './session/index.js';
