/**
 * When a peer counts as gone: it stayed silent longer than the time we could hear it, or its
 * descriptor stayed missing from the store's reads past the grace.
 */
export { SilenceClock, heardBy } from './silence.js';
export { VanishGrace, byEndpoint } from './vanish-grace.js';
