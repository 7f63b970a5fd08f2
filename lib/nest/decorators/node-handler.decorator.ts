import type { MessageKind } from '../../core/calls/index.js';
import { ZLINK_NODE_HANDLER } from './zlink.constants.js';
import type { ChannelHandlerOptions } from './channel-handler.decorator.js';
import { handlerDecorator } from './handler-decorator.js';

export type NodeHandlerOptions = ChannelHandlerOptions;

/** What `@NodeHandler` records on a method. @internal */
export interface NodeHandlerMetadata {
  readonly mesh: string;
  readonly packet: string;
  readonly kind: MessageKind;
}

/**
 * Marks a method as the Node direct handler of `packetName` on MeshName `meshName`: it receives what
 * `ZLinkRouteClient.sendToNode` / `requestToNode` address to this process's MeshNode. Node direct handlers
 * live in a namespace of their own per MeshName, apart from every channel's, so the same packet name may also
 * have a `@ChannelHandler` (docs/protocol.md#handler-scopes-and-context). The method runs through Nest's
 * pipeline with `(payload, ZLinkNodeMessageContext)`: the message fields plus `meshName` and `sourceRid`.
 * Bootstrap fails with `Configuration` for a duplicate or an unregistered MeshName.
 */
export function NodeHandler(
  meshName: string,
  packetName: string,
  options: NodeHandlerOptions = {},
): MethodDecorator {
  const kind = options.kind ?? 'request';
  const entry: NodeHandlerMetadata = { mesh: meshName, packet: packetName, kind };
  return handlerDecorator(
    'NodeHandler',
    ZLINK_NODE_HANDLER,
    { name: 'meshName', value: meshName },
    packetName,
    kind,
    entry,
  );
}
