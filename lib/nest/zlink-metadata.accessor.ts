import { Injectable } from '@nestjs/common';
import type { ChannelHandlerMetadata } from './decorators/channel-handler.decorator.js';
import { ZLINK_CHANNEL_HANDLER } from './zlink.constants.js';

/** Reads what the ZLink decorators recorded. @internal */
@Injectable()
export class ZLinkMetadataAccessor {
  /** The `@ChannelHandler`s of one method, in declaration order; empty when it has none. */
  channelHandlers(method: unknown): readonly ChannelHandlerMetadata[] {
    if (typeof method !== 'function') return [];
    return (Reflect.getMetadata(ZLINK_CHANNEL_HANDLER, method) as ChannelHandlerMetadata[] | undefined) ?? [];
  }
}
