/**
 * The names the event stream (events.ts) and the counters (metrics.ts) share: which topology a
 * record travelled and what became of a received one. Here, apart from both, so that neither
 * imports the other's module for them (events holds the metrics, metrics counts the events).
 */
export type RouteKind = 'client-server' | 'route-mesh' | 'fanout' | 'session';

/**
 * What happened to a received business record (docs/protocol.md#what-observability-separates: the handler
 * delivery result).
 */
export type DeliveryResult =
  | 'ok'
  | 'no_handler'
  | 'decode_error'
  | 'handler_error'
  | 'reply_error'
  | 'drop'
  | 'rejected'
  | 'protocol_error';
