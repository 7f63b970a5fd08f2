import { ZLinkError } from '../core/index.js';
import { type CallSubmitter, ZLinkRequestCall, ZLinkSendCall } from './calls.js';

/**
 * Starts sends and requests. ChannelName calls pick one server by weight (02 §3); Node calls name
 * one MeshNode (RouteMesh, not available in this version: they end `NotFound`).
 */
export class ZLinkRouteClient {
  constructor(private readonly submitter: CallSubmitter) {}

  sendToChannel(channel: string, packet: string, message: unknown): ZLinkSendCall {
    return new ZLinkSendCall(this.submitter, channel, packet, message);
  }

  requestToChannel(channel: string, packet: string, request: unknown): ZLinkRequestCall {
    return new ZLinkRequestCall(this.submitter, channel, packet, request);
  }

  sendToNode(mesh: string, rid: string, packet: string, message: unknown): ZLinkSendCall {
    return new ZLinkSendCall(noMesh(mesh, rid), mesh, packet, message);
  }

  requestToNode(mesh: string, rid: string, packet: string, request: unknown): ZLinkRequestCall {
    return new ZLinkRequestCall(noMesh(mesh, rid), mesh, packet, request);
  }
}

function noMesh(mesh: string, rid: string): CallSubmitter {
  return {
    submit: () =>
      Promise.reject(
        new ZLinkError('NotFound', `MeshName '${mesh}' is not registered in this process (target ${rid})`),
      ),
  };
}
