import type { MessageKind } from '../../core/calls/index.js';
import { ZLINK_ACTOR_HANDLER, ZLINK_SPOT_HANDLER, ZLINK_SPOT_SUBSCRIBE } from './zlink.constants.js';
import type { ChannelHandlerOptions } from './channel-handler.decorator.js';
import { checkName, handlerDecorator, methodDecorator } from './handler-decorator.js';

export type ObjectHandlerOptions = ChannelHandlerOptions;

/** What `@SpotHandler` / `@ActorHandler` record on a method. @internal */
export interface ObjectHandlerMetadata {
  readonly packet: string;
  readonly kind: MessageKind;
}

/** What `@SpotSubscribe` records on a method; `topic` undefined means the handler's packet name. @internal */
export interface SpotSubscribeMetadata {
  readonly channel: string;
  readonly topic: string | undefined;
}

/**
 * Marks a method of a `@Spot` class as the handler of `packetName` sent to that Spot by global id.
 * It runs one turn at a time on the object, through Nest's pipeline like a channel handler. At
 * bootstrap, a second handler for the same (type, kind, packet), or this decorator on a class without
 * `@Spot` (or with `@Actor`), fails with `Configuration` naming `Class.method`.
 */
export function SpotHandler(packetName: string, options: ObjectHandlerOptions = {}): MethodDecorator {
  const kind = options.kind ?? 'request';
  const entry: ObjectHandlerMetadata = { packet: packetName, kind };
  return handlerDecorator('SpotHandler', ZLINK_SPOT_HANDLER, undefined, packetName, kind, entry);
}

/** As `@SpotHandler`, on a method of an `@Actor` class. */
export function ActorHandler(packetName: string, options: ObjectHandlerOptions = {}): MethodDecorator {
  const kind = options.kind ?? 'request';
  const entry: ObjectHandlerMetadata = { packet: packetName, kind };
  return handlerDecorator('ActorHandler', ZLINK_ACTOR_HANDLER, undefined, packetName, kind, entry);
}

/**
 * Subscribes the Spot, while it is active, to Logical Multicast events of `topic` on RouteMesh channel
 * `channelName` (docs/protocol.md#logical-multicast); the events reach this method, which must also carry a
 * `@SpotHandler` (`kind: 'send'`), and `topic` defaults to that handler's packet name. At bootstrap, this
 * decorator on an Actor, or on a method without a `@SpotHandler`, fails with `Configuration`.
 */
export function SpotSubscribe(channelName: string, topic?: string): MethodDecorator {
  const entry: SpotSubscribeMetadata = { channel: channelName, topic };
  return methodDecorator('SpotSubscribe', ZLINK_SPOT_SUBSCRIBE, entry, (where) => {
    checkName(where, 'channelName', channelName);
    if (topic !== undefined) checkName(where, 'topic', topic);
  });
}
