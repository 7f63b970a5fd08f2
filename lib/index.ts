/**
 * The public surface of nestjs-zlink. Wire encoders, the selector and other building blocks stay
 * inside their layers; what is exported here is what applications use.
 */
export {
  ZLINK_ERROR_CODES,
  REMOTE_CODES,
  DRAINING_CODE,
  FENCED_CODE,
  ZLinkError,
  isZLinkError,
  type WireError,
  type ZLinkErrorCode,
  type ZLinkErrorOptions,
} from './core/index.js';
export { METADATA_MAX_BYTES, type ZLinkMetadata } from './core/index.js';
export {
  zlinkKeyPair,
  type ZLinkKeyPair,
  type SecurityOptions,
  type CurveOptions,
  type ListenerSecurityOptions,
} from './core/index.js';
export type {
  MessageKind,
  ZLinkTargetKind,
  ZLinkMessageContext,
  ZLinkNodeMessageContext,
  ZLinkFanoutContext,
  ChannelHandlerRegistration,
  FanoutHandlerRegistration,
  NodeHandlerRegistration,
  MeshMembership,
  ObjectClassDescription,
  ObjectHandlerDescription,
  ObjectSubscriptionDescription,
  ObjectLifecycleHooks,
  ObjectRef,
  SpotRef,
  ActorRef,
  ObjectKind,
  ZLinkObjectContext,
  ZLinkObjectScope,
  ZLinkActivationContext,
  ZLinkObjectTimers,
  ZLinkTimerId,
  DeactivationReason,
  MemberLeaveReason,
  ZLinkMembership,
  ObjectInstances,
  ObjectMetricsSnapshot,
  MulticastMetricsSnapshot,
  SpotPublishOptions,
  ZLinkSpotPublishCall,
  ZLinkMulticastEvent,
  ZLinkSessionContext,
  ZLinkSessionHello,
  ZLinkSessionRef,
  ZLinkBoundSessions,
  ZLinkRelayOptions,
  SessionCloseReason,
  SessionHandlerRegistration,
  SessionHookRegistration,
  SessionListenerOptions,
  SessionListenerSnapshot,
} from './core/index.js';
// `ZLinkSession` (the session's type and its parameter decorator) comes with the Nest surface below.
export { SESSION_PROTOCOL_VERSION, SessionCloseCode } from './core/index.js';
export { ObjectClassRegistry, lifecycleHooksOf, plainObjectInstances } from './core/index.js';
export {
  DEFAULT_WEIGHT,
  WEIGHT_MAX,
  WEIGHT_MIN,
  type ClientServerChannelOptions,
  type ClientServerClientOptions,
  type ClientServerRegistration,
  type ClientServerServerOptions,
  type FanoutChannelOptions,
  type FanoutPublisherOptions,
  type FanoutSubscriberOptions,
  type FanoutTopic,
  type ListenOptions,
  type MeshChannelOptions,
  type MeshOptions,
  type MeshPeerOptions,
  type ObjectOptions,
  type ObjectRole,
  type ZLinkOptions,
} from './core/index.js';
export {
  ZLinkEvents,
  LATENCY_BUCKETS_MS,
  LATENCY_SAMPLE_WEIGHT,
  toPrometheusText,
  type HistogramSnapshot,
  type MetricsSnapshot,
  type SubscribeOptions,
  type DeliveryResult,
  type RouteKind,
  type ZLinkEvent,
  type ZLinkEventListener,
  type ZLinkEventType,
} from './core/index.js';
export type {
  ClientConnectionSnapshot,
  FanoutLinkSnapshot,
  MeshChannelSnapshot,
  MeshLinkSnapshot,
  MeshPeerSnapshot,
  MeshSnapshot,
} from './core/index.js';
export type {
  DescriptorKind,
  LeaseTiming,
  LocationDescriptor,
  LocationStore,
  LocationStoreOptions,
  MeshNodeDescriptor,
  PublisherDescriptor,
  RelocationStoreOptions,
  ServerDescriptor,
  StoreConnectionOptions,
} from './core/index.js';
export { MemoryLocationStore, MemoryRelocationStore, type RedisLocationStoreOptions } from './store/index.js';
export * from './runtime/index.js';
export * from './nest/index.js';
