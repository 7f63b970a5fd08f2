/** Reflect-metadata key of the `@ChannelHandler` list on a method. @internal */
export const ZLINK_CHANNEL_HANDLER = 'zlink:channel-handler';

/** Reflect-metadata key of the `@NodeHandler` list on a method. @internal */
export const ZLINK_NODE_HANDLER = 'zlink:node-handler';
export const ZLINK_FANOUT_HANDLER = 'zlink:fanout-handler';
/** Reflect-metadata keys of `@SessionHandler` and of `@OnSessionOpen` / `@OnSessionClose`. @internal */
export const ZLINK_SESSION_HANDLER = 'zlink:session-handler';
export const ZLINK_SESSION_HOOK = 'zlink:session-hook';

/**
 * Parameter types of ZLink handler arguments. The values equal Nest's `RpcParamtype.PAYLOAD` and
 * `RpcParamtype.CONTEXT`, so `@Payload()` and `@Ctx()` from `@nestjs/microservices` resolve to the
 * same arguments as `@ZLinkPayload()` and `@ZLinkContext()`.
 */
export enum ZLinkParamtype {
  PAYLOAD = 3,
  CONTEXT = 6,
  /** `@ZLinkSession()`: the context's `session` (a number of ours, past Nest's own). */
  SESSION = 100,
}

/**
 * Reflect-metadata keys of the object layer: the class's `@Spot`/`@Actor`, its methods' handlers and
 * subscriptions. @internal
 */
export const ZLINK_OBJECT_CLASS = 'zlink:object-class';
export const ZLINK_SPOT_HANDLER = 'zlink:spot-handler';
export const ZLINK_ACTOR_HANDLER = 'zlink:actor-handler';
export const ZLINK_SPOT_SUBSCRIBE = 'zlink:spot-subscribe';
