/**
 * Durable state of persistent Spots and Actors (docs/decisions.md#durable-state): what an owner keeps
 * in a State Store (`lib/core/ports/state-store.ts`) and when. It sits above `resolve` (timing) and
 * below `owner`, which holds one durable state per persistent activation; it knows core's ports and
 * wire and `execution` (turns), never an activation.
 */
export { StateBatcher } from './state-batcher.js';
export { DurableState, type DurableDeps, type DurableHandover } from './durable-state.js';
export { type AdoptedState, adoptState } from './restore-state.js';
export { ObjectStateHandle } from './object-state.js';
