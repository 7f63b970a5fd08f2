import { Injectable } from '@nestjs/common';
import type { ChannelHandlerMetadata } from './decorators/channel-handler.decorator.js';
import type { FanoutHandlerMetadata } from './decorators/fanout-handler.decorator.js';
import type { NodeHandlerMetadata } from './decorators/node-handler.decorator.js';
import {
  ZLINK_CHANNEL_HANDLER,
  ZLINK_FANOUT_HANDLER,
  ZLINK_NODE_HANDLER,
} from './decorators/zlink.constants.js';

/** Reads what the ZLink decorators recorded. @internal */
@Injectable()
export class ZLinkMetadataAccessor {
  /** The `@ChannelHandler`s of one method, in declaration order; empty when it has none. */
  channelHandlers(method: unknown): readonly ChannelHandlerMetadata[] {
    return read<ChannelHandlerMetadata>(ZLINK_CHANNEL_HANDLER, method);
  }

  /** The `@NodeHandler`s of one method, in declaration order; empty when it has none. */
  nodeHandlers(method: unknown): readonly NodeHandlerMetadata[] {
    return read<NodeHandlerMetadata>(ZLINK_NODE_HANDLER, method);
  }

  /** The `@FanoutHandler`s of one method, in declaration order; empty when it has none. */
  fanoutHandlers(method: unknown): readonly FanoutHandlerMetadata[] {
    return read<FanoutHandlerMetadata>(ZLINK_FANOUT_HANDLER, method);
  }

  /** How many ZLink handler decorators a method carries. */
  count(method: unknown): number {
    return (
      this.channelHandlers(method).length +
      this.nodeHandlers(method).length +
      this.fanoutHandlers(method).length
    );
  }
}

/** The list a ZLink method decorator recorded under `key`; empty when there is none. @internal */
export function read<T>(key: string, method: unknown): readonly T[] {
  if (typeof method !== 'function') return [];
  return (Reflect.getMetadata(key, method) as T[] | undefined) ?? [];
}
