export {
  ChannelHandler,
  type ChannelHandlerOptions,
  FanoutHandler,
  NodeHandler,
  type NodeHandlerOptions,
  ZLinkContext,
  ZLinkPayload,
  Spot,
  Actor,
  type ObjectClassOptions,
  SpotHandler,
  ActorHandler,
  SpotSubscribe,
  type ObjectHandlerOptions,
  SessionHandler,
  OnSessionOpen,
  OnSessionClose,
  OnSessionDropped,
  OnSessionResumed,
  ZLinkSession,
  type SessionHandlerOptions,
} from './decorators/index.js';
export { ZLinkModule, type ZLinkModuleAsyncOptions } from './zlink.module.js';
export { ZLinkParamtype } from './decorators/zlink.constants.js';
export { ZLinkEventStream, fromZLinkEvents, type ZLinkEventOf } from './observability/zlink-event-stream.js';
