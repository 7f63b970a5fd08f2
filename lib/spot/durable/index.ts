/**
 * Durable state of persistent Spots and Actors (docs/decisions.md#durable-state): what an owner keeps
 * in a State Store (`lib/core/ports/state-store.ts`) and when. It sits above `resolve` (the owner's
 * lease and timing) and below `owner`, which will hold one durable state per persistent activation; it
 * knows core's ports and wire and `execution` (timers), never an activation. Empty until its parts land.
 */
export {};
