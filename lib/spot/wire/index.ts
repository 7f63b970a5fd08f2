/**
 * The object layer's own records: object calls and answers, control, Message Follow, relocation, owner leave.
 */
export * from './object-wire.js';
export * from './object-encode.js';
export * from './object-relay.js';
export * from './object-control-wire.js';
export * from './object-follow-wire.js';
export * from './owner-leave-wire.js';
export * from './relocation-wire.js';
export * from './relocation-steps-wire.js';
export * from './lone-object.js';
export { readObjectFences, writeObjectFences } from './object-fences.js';
export * from './session-wire.js';
export * from './session-room-push-wire.js';
export * from './spot-event-wire.js';
export * from './topic-barrier-wire.js';
