import type { MessageKind } from '../../core/calls/index.js';
import { ZLINK_CHANNEL_HANDLER } from './zlink.constants.js';
import { handlerDecorator } from './handler-decorator.js';

export interface ChannelHandlerOptions {
  /** `'request'` answers with the method's result; `'send'` is one-way. @default 'request' */
  kind?: MessageKind;
}

/** What `@ChannelHandler` records on a method. @internal */
export interface ChannelHandlerMetadata {
  readonly channel: string;
  readonly packet: string;
  readonly kind: MessageKind;
}

/**
 * Marks a provider or controller method as the handler of `packetName` on ChannelName
 * `channelName` — a ClientServer Server channel or a RouteMesh channel with the `server` role. The
 * method runs through Nest's pipeline (guards, interceptors, pipes, exception filters; context type
 * `'rpc'`) with `(payload, ZLinkMessageContext)` as its arguments.
 *
 * A method may carry several `@ChannelHandler`s. At bootstrap, a second handler for the same
 * (channel, kind, packet), a handler on a channel this process does not serve, or a handler on a
 * request-scoped or transient class fails with `Configuration` naming `Class.method`. A bad
 * argument here throws `Configuration` when the class is defined.
 */
export function ChannelHandler(
  channelName: string,
  packetName: string,
  options: ChannelHandlerOptions = {},
): MethodDecorator {
  const kind = options.kind ?? 'request';
  const entry: ChannelHandlerMetadata = { channel: channelName, packet: packetName, kind };
  return handlerDecorator(
    'ChannelHandler',
    ZLINK_CHANNEL_HANDLER,
    { name: 'channelName', value: channelName },
    packetName,
    kind,
    entry,
  );
}
