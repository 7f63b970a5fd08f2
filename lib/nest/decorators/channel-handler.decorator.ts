import { configurationError, type MessageKind } from '../../core/index.js';
import { ZLINK_CHANNEL_HANDLER } from '../zlink.constants.js';

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
 * `channelName`. The method runs through Nest's pipeline (guards, interceptors, pipes, exception
 * filters; context type `'rpc'`) with `(payload, ZLinkMessageContext)` as its arguments.
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
  return (target, key, descriptor) => {
    const where = `@ChannelHandler on ${(target as { constructor: { name: string } }).constructor.name}.${String(key)}`;
    checkName(where, 'channelName', channelName);
    checkName(where, 'packetName', packetName);
    if (kind !== 'request' && kind !== 'send') {
      throw configurationError(where, `kind must be 'request' or 'send', got ${JSON.stringify(kind)}`);
    }
    const method = descriptor.value as object | undefined;
    if (typeof method !== 'function') throw configurationError(where, 'must decorate a method');
    const list =
      (Reflect.getMetadata(ZLINK_CHANNEL_HANDLER, method) as ChannelHandlerMetadata[] | undefined) ?? [];
    Reflect.defineMetadata(
      ZLINK_CHANNEL_HANDLER,
      [...list, Object.freeze({ channel: channelName, packet: packetName, kind })],
      method,
    );
    return descriptor;
  };
}

function checkName(where: string, what: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) {
    throw configurationError(
      where,
      `${what} must be a non-empty string without NUL, got ${JSON.stringify(value)}`,
    );
  }
}
