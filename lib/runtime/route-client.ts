import { type CallSubmitter, ZLinkRequestCall, ZLinkSendCall } from './calls.js';

/**
 * Starts sends and requests. ChannelName calls pick one Server by weight over the send path the
 * name is registered on — RouteMesh or ClientServer, the calling code is the same (02 §3); Node
 * direct calls name one MeshNode.
 */
export class ZLinkRouteClient {
  constructor(private readonly submitter: CallSubmitter) {}

  sendToChannel(channel: string, packet: string, message: unknown): ZLinkSendCall {
    return new ZLinkSendCall(this.submitter, { kind: 'channel', channel }, packet, message);
  }

  requestToChannel(channel: string, packet: string, request: unknown): ZLinkRequestCall {
    return new ZLinkRequestCall(this.submitter, { kind: 'channel', channel }, packet, request);
  }

  /**
   * Node direct: reaches exactly the MeshNode `rid` of mesh `mesh`, never another (02 §2). Ends
   * `NotFound` when `rid` is not a member (or is an Object Client, or this node), `Timeout` when it
   * is known but not ready by the deadline, `RouteError` when its link is lost.
   */
  sendToNode(mesh: string, rid: string, packet: string, message: unknown): ZLinkSendCall {
    return new ZLinkSendCall(this.submitter, { kind: 'node', mesh, rid }, packet, message);
  }

  requestToNode(mesh: string, rid: string, packet: string, request: unknown): ZLinkRequestCall {
    return new ZLinkRequestCall(this.submitter, { kind: 'node', mesh, rid }, packet, request);
  }
}
