/** What the runtime tells: events, metrics and their Prometheus text, snapshots. */
export * from './events.js';
export * from './metrics.js';
export * from './prometheus.js';
export * from './snapshots.js';
export * from './object-metrics.js';
export * from './multicast-metrics.js';
