import { configurationError } from '../core/errors.js';
import {
  type ChannelHandlerRegistration,
  ChannelHandlerRegistry,
  FanoutHandlerRegistry,
  NodeHandlerRegistry,
} from '../core/calls/index.js';
import type { NormalizedOptions } from '../core/options/index.js';

export interface RegisteredHandlers {
  readonly channels: ChannelHandlerRegistry;
  readonly nodes: NodeHandlerRegistry;
  readonly fanout: FanoutHandlerRegistry;
}

/**
 * A handler for a channel or mesh this process does not serve is a startup error naming the
 * handler: it would never run, and the user meant something.
 */
export function checkHandlers(
  options: NormalizedOptions,
  handlers: RegisteredHandlers,
  meshChannelRole: (channel: string) => 'server' | 'client' | undefined,
): void {
  const sources = (list: readonly { source: string }[]) => list.map((h) => h.source).join(', ');
  for (const channel of handlers.channels.channels()) {
    const cs = options.clientServer.get(channel);
    const meshRole = meshChannelRole(channel);
    if (cs?.server || meshRole === 'server') continue;
    throw configurationError(
      `handler ${sources(handlers.channels.forChannel(channel))}`,
      cs || meshRole
        ? `channel '${channel}' has no Server role in this process`
        : `channel '${channel}' is not registered in this process`,
    );
  }
  for (const mesh of handlers.nodes.scopes()) {
    const objectRole = options.meshes.get(mesh)?.objectRole;
    if (objectRole !== undefined && objectRole !== 'client') continue;
    throw configurationError(
      `node handler ${sources(handlers.nodes.forScope(mesh))}`,
      objectRole === 'client'
        ? `the MeshNode of '${mesh}' is an Object Client, which takes no Node direct handlers`
        : `MeshName '${mesh}' is not registered in this process`,
    );
  }
  for (const channel of handlers.fanout.scopes()) {
    const f = options.fanout.get(channel);
    if (f?.subscriber) continue;
    throw configurationError(
      `fanout handler ${sources(handlers.fanout.forScope(channel))}`,
      f
        ? `fanout channel '${channel}' has no subscriber in this process`
        : `fanout channel '${channel}' is not registered in this process`,
    );
  }
}

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
