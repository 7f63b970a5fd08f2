import {
  type ChannelHandlerRegistration,
  ChannelHandlerRegistry,
  FanoutHandlerRegistry,
  NodeHandlerRegistry,
} from '../core/calls/index.js';
import type { NormalizedOptions } from '../core/options/index.js';
import { checkHandlers } from './handler-checks.js';

/**
 * A channel handler may join a started runtime: listeners and mesh memberships look handlers up on
 * every message, so nothing has to be rebuilt. A Nest microservice (`ZLinkServer` sharing
 * `ZLinkModule`'s runtime) may start after the application did. The startup rule still holds — a
 * handler on a channel this process does not serve is `Configuration` — with the same message
 * `start()` gives. Node direct and fanout handlers stay start-only: fanout topics are subscribed at
 * start.
 */
export function checkLateChannelHandler(
  options: NormalizedOptions,
  registration: ChannelHandlerRegistration,
  meshChannelRole: (channel: string) => 'server' | 'client' | undefined,
): void {
  const channels = new ChannelHandlerRegistry();
  channels.register(registration);
  const handlers = { channels, nodes: new NodeHandlerRegistry(), fanout: new FanoutHandlerRegistry() };
  checkHandlers(options, handlers, meshChannelRole);
}
