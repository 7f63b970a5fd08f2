export {
  ZLinkRequestCall,
  ZLinkSendCall,
  type CallOptions,
  type CallSubmission,
  type CallSubmitter,
  type CallTarget,
} from './calls.js';
export { ZLinkRouteClient, ZLinkObjectTarget, ZLinkSpotTarget } from './route-client.js';
export {
  ZLinkObjects,
  type ObjectCreateOptions,
  type ObjectDestroyOptions,
  type ObjectMembershipOptions,
  type ObjectRelocateOptions,
  type ObjectRelocation,
  type ObjectResolution,
} from './zlink-objects.js';
export { ZLinkRuntime } from './zlink-runtime.js';
export { ZLinkSpotPublisher } from './spot-publisher.js';
export type {
  ChannelRole,
  ClientServerChannelSnapshot,
  FanoutChannelSnapshot,
  ObjectsSnapshot,
  ZLinkSnapshot,
} from './snapshot.js';
export {
  ZLinkFanoutClient,
  ZLinkFanoutPublishCall,
  type FanoutSubmitter,
  type PublishCall,
  type PublishOptions,
} from './fanout-client.js';
export type { LocationSnapshot, StoreCheck } from './location.js';
export type { RuntimeState as ZLinkRuntimeState } from './zlink-runtime.js';
export type { RuntimeSessions as ZLinkRuntimeSessions } from './sessions.js';
export {
  HEALTH_STORE_TIMEOUT_MS,
  checkZLinkHealth,
  type ZLinkHealthChannel,
  type ZLinkHealthListener,
  type ZLinkHealthOptions,
  type ZLinkHealthReport,
} from './health.js';
export { CURVE_ENV, curveKeysFromEnv, curveKeysFromFile } from './curve-key-files.js';
