import type { ObjectKind } from '../core/kinds.js';
import { type CallSubmitter, type CallTarget, ZLinkRequestCall, ZLinkSendCall } from './calls.js';

/**
 * Starts sends and requests. ChannelName calls pick one Server by weight over the send path the name is
 * registered on — RouteMesh or ClientServer, the calling code is the same (docs/protocol.md#arrangements);
 * Node direct calls name one MeshNode.
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
   * Node direct: reaches exactly the MeshNode `rid` of mesh `mesh`, never another
   * (docs/protocol.md#node-direct). Ends `NotFound` when `rid` is not a member (or is an Object Client, or
   * this node), `Timeout` when it is known but not ready by the deadline, `RouteError` when its link is lost.
   */
  sendToNode(mesh: string, rid: string, packet: string, message: unknown): ZLinkSendCall {
    return new ZLinkSendCall(this.submitter, { kind: 'node', mesh, rid }, packet, message);
  }

  requestToNode(mesh: string, rid: string, packet: string, request: unknown): ZLinkRequestCall {
    return new ZLinkRequestCall(this.submitter, { kind: 'node', mesh, rid }, packet, request);
  }

  /**
   * A Spot by its global id, wherever it lives now (docs/protocol.md#resolving-a-global-id): `.send()` /
   * `.request()` reach its current owner through the route cache or one store read; `.instance(type, init)`
   * lets a Missing Spot be created first. Never a ref, a NodeRid or a mesh: only the id.
   */
  toSpot(id: string): ZLinkSpotTarget {
    return new ZLinkSpotTarget(this.submitter, id, undefined);
  }

  /**
   * An Actor by its global id (as `toSpot`, without Instance intent: an Actor is only ever created
   * explicitly).
   */
  toActor(id: string): ZLinkObjectTarget {
    return new ZLinkObjectTarget(this.submitter, 'actor', id, undefined);
  }
}

/** Calls to one object by global id. Nothing happens until `.async()` on the call. */
export class ZLinkObjectTarget {
  constructor(
    protected readonly submitter: CallSubmitter,
    protected readonly objectKind: ObjectKind,
    protected readonly id: string,
    protected readonly intent: { readonly type: string; readonly init: unknown } | undefined,
  ) {}

  /**
   * A one-way message to the object's handler for `packet`. `.async()` resolves once the owner's queue
   * (this process) or the mesh send queue took it; ends `NotFound` when the object does not exist,
   * `Unavailable` when it cannot take messages now (being created or released, its owner gone or
   * unreachable, a stale route, the store down until the deadline), `Rejected` (its queue is full, its
   * owner is fenced), `Timeout`, `Cancelled`, `RouteError`, `InvalidArgument` or `Shutdown`. Never
   * resent to another owner.
   */
  send(packet: string, message: unknown): ZLinkSendCall {
    return new ZLinkSendCall(this.submitter, this.target(), packet, message);
  }

  /**
   * A request to the object's handler for `packet`; `.async()` resolves with its reply. Ends as a send
   * does, plus `RemoteError` (the handler failed), `InvalidOperation` (a request from the object to
   * itself) and `RouteError` (the owner was lost with the request in flight: it may have run).
   */
  request(packet: string, request: unknown): ZLinkRequestCall {
    return new ZLinkRequestCall(this.submitter, this.target(), packet, request);
  }

  private target(): CallTarget {
    return this.intent === undefined
      ? { kind: 'object', objectKind: this.objectKind, id: this.id }
      : { kind: 'object', objectKind: this.objectKind, id: this.id, instance: this.intent };
  }
}

/** A Spot by global id, with Instance intent available. */
export class ZLinkSpotTarget extends ZLinkObjectTarget {
  constructor(
    submitter: CallSubmitter,
    id: string,
    intent: { readonly type: string; readonly init: unknown } | undefined,
  ) {
    super(submitter, 'spot', id, intent);
  }

  /**
   * Instance intent: when the Spot is Missing, it is created (get-or-create, as type `type`, `init` for
   * its `onActivate`) on the node placement picks, then called. The only call that may create.
   */
  instance(type: string, init?: unknown): ZLinkSpotTarget {
    return new ZLinkSpotTarget(this.submitter, this.id, { type, init });
  }
}
