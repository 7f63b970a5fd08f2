export { ChannelHandler, type ChannelHandlerOptions } from './channel-handler.decorator.js';
export { NodeHandler, type NodeHandlerOptions } from './node-handler.decorator.js';
export { FanoutHandler } from './fanout-handler.decorator.js';
export { ZLinkContext, ZLinkPayload } from './params.decorator.js';
export { Spot, Actor, type ObjectClassOptions } from './object.decorator.js';
export {
  SpotHandler,
  ActorHandler,
  SpotSubscribe,
  type ObjectHandlerOptions,
} from './object-handler.decorator.js';
export {
  SessionHandler,
  OnSessionOpen,
  OnSessionClose,
  OnSessionDropped,
  OnSessionResumed,
  ZLinkSession,
  type SessionHandlerOptions,
} from './session.decorator.js';
