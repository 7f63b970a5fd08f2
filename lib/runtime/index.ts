export {
  ZLinkRequestCall,
  ZLinkSendCall,
  type CallOptions,
  type CallSubmission,
  type CallSubmitter,
} from './calls.js';
export { ZLinkRouteClient } from './route-client.js';
export { ZLinkRuntime } from './zlink-runtime.js';
export type { ChannelRole, MeshSnapshot, ZLinkSnapshot } from './snapshot.js';
export {
  ZLinkFanoutClient,
  ZLinkFanoutPublishCall,
  type FanoutSubmitter,
  type PublishCall,
  type PublishOptions,
} from './fanout-client.js';
export type { LocationSnapshot } from './location.js';
