import type { MulticastTopicMetrics } from '../../core/observe/index.js';
import type { SpotEventStamp } from '../owner/index.js';

/** One event as every subscribed Spot of this node takes it: decoded once per record, shared. */
export interface LocalEvent {
  readonly packet: string;
  readonly payload: Uint8Array;
  readonly stamp: SpotEventStamp;
  readonly metrics: MulticastTopicMetrics;
}
