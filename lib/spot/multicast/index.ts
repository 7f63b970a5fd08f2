/** Logical Multicast: Spots subscribed to (channel, topic), what nodes advertise, publish and delivery. */
export { LocalTopics } from './local-topics.js';
export { type MoveMulticast, type MulticastDeps, SpotMulticast } from './spot-multicast.js';
export { carriedEvent } from './event-delivery.js';
