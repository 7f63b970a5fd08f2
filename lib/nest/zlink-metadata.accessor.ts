import { Injectable } from '@nestjs/common';
import type { ChannelHandlerMetadata } from './decorators/channel-handler.decorator.js';
import type { FanoutHandlerMetadata } from './decorators/fanout-handler.decorator.js';
import type { NodeHandlerMetadata } from './decorators/node-handler.decorator.js';
import type { SessionHandlerMetadata, SessionHookMetadata } from './decorators/session.decorator.js';
import {
  ZLINK_CHANNEL_HANDLER,
  ZLINK_FANOUT_HANDLER,
  ZLINK_NODE_HANDLER,
  ZLINK_SESSION_HANDLER,
  ZLINK_SESSION_HOOK,
} from './decorators/zlink.constants.js';

/** Reads what the ZLink decorators recorded. @internal */
@Injectable()
export class ZLinkMetadataAccessor {
  /**
   * The `@ChannelHandler`s of one method, in the order the decorators ran (bottom-up: the one
   * nearest the method first); empty when it has none.
   */
  channelHandlers(method: unknown): readonly ChannelHandlerMetadata[] {
    return read<ChannelHandlerMetadata>(ZLINK_CHANNEL_HANDLER, method);
  }

  /** The `@NodeHandler`s of one method, bottom-up as `channelHandlers`; empty when it has none. */
  nodeHandlers(method: unknown): readonly NodeHandlerMetadata[] {
    return read<NodeHandlerMetadata>(ZLINK_NODE_HANDLER, method);
  }

  /** The `@FanoutHandler`s of one method, bottom-up as `channelHandlers`; empty when it has none. */
  fanoutHandlers(method: unknown): readonly FanoutHandlerMetadata[] {
    return read<FanoutHandlerMetadata>(ZLINK_FANOUT_HANDLER, method);
  }

  /** The `@SessionHandler`s of one method; empty when it has none. */
  sessionHandlers(method: unknown): readonly SessionHandlerMetadata[] {
    return read<SessionHandlerMetadata>(ZLINK_SESSION_HANDLER, method);
  }

  /** The `@OnSessionOpen` / `@OnSessionClose` marks of one method; empty when it has none. */
  sessionHooks(method: unknown): readonly SessionHookMetadata[] {
    return read<SessionHookMetadata>(ZLINK_SESSION_HOOK, method);
  }

  /** How many ZLink handler decorators a method carries. */
  count(method: unknown): number {
    return (
      this.channelHandlers(method).length +
      this.nodeHandlers(method).length +
      this.fanoutHandlers(method).length +
      this.sessionHandlers(method).length +
      this.sessionHooks(method).length
    );
  }
}

/** The list a ZLink method decorator recorded under `key`; empty when there is none. @internal */
export function read<T>(key: string, method: unknown): readonly T[] {
  if (typeof method !== 'function') return [];
  return (Reflect.getMetadata(key, method) as T[] | undefined) ?? [];
}
