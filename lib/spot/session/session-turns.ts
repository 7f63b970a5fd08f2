import { ZLinkError } from '../../core/errors.js';
import { decodePayload, encodePayload, isCount, isName, isStr } from '../../core/wire/index.js';
import type { PendingRequests } from '../../core/calls/index.js';
import type { MeshLink, NodeRun } from '../../core/ports/index.js';
import { RUNTIME_PACKET_PREFIX } from '../../core/objects/index.js';
import { askPeer } from '../caller/index.js';
import {
  type Activation,
  type ActorBinding,
  type InboundObjectCall,
  type RuntimeTurnBuilder,
  userCode,
} from '../owner/index.js';
import { bindingItems, encodeSessionUnbind, readBindingItems } from '../wire/index.js';
import { SESSION_UNBIND_TIMEOUT_MS } from '../timing/index.js';

/**
 * The turns a bound Actor runs for its sessions (docs/protocol.md#session-bindings), each an object call of a
 * runtime packet so that it keeps its place in the Actor's queue and moves with it when the Actor
 * relocates: a bind (registers the binding and answers with the route it is held on), a tombstone (a
 * rebind moved the binding elsewhere), a session's end (`onSessionClosed`), and a resumable session's
 * drop and resume (`onSessionDropped`, `onSessionResumed`: docs/sessions.md#resume-after-a-drop).
 */
export const SESSION_BIND_PACKET = `${RUNTIME_PACKET_PREFIX}session-bind`;
export const SESSION_UNBIND_PACKET = `${RUNTIME_PACKET_PREFIX}session-unbind`;
export const SESSION_CLOSED_PACKET = `${RUNTIME_PACKET_PREFIX}session-closed`;
export const SESSION_DROPPED_PACKET = `${RUNTIME_PACKET_PREFIX}session-dropped`;
export const SESSION_RESUMED_PACKET = `${RUNTIME_PACKET_PREFIX}session-resumed`;

/** A bind's payload: the binding, and the owner run of the binding it replaces (a rebind), if any. */
export function bindPayload(binding: ActorBinding, previous: NodeRun | undefined): Uint8Array {
  return encodePayload([...bindingItems(binding), previous ? [previous.rid, previous.nodeGeneration] : null]);
}

/** An unbind's or a session end's payload: which binding, and (an end) why. */
export function endPayload(
  ownerRid: string,
  sessionId: string,
  bindingGeneration: number,
  reason = '',
): Uint8Array {
  return encodePayload([ownerRid, sessionId, bindingGeneration, reason]);
}

function readBind(payload: Uint8Array): { binding: ActorBinding; previous: NodeRun | undefined } | undefined {
  const decoded = decodePayload(payload);
  if (!decoded.ok || !Array.isArray(decoded.value)) return undefined;
  const items = decoded.value as unknown[];
  const binding = readBindingItems(items);
  if (binding === undefined) return undefined;
  const prev = items[5];
  const previous =
    Array.isArray(prev) && isName(prev[0]) && isStr(prev[1])
      ? { rid: prev[0], nodeGeneration: prev[1] }
      : undefined;
  return { binding, previous };
}

function readEnd(
  payload: Uint8Array,
): { ownerRid: string; sessionId: string; gen: number; reason: string } | undefined {
  const decoded = decodePayload(payload);
  if (!decoded.ok || !Array.isArray(decoded.value)) return undefined;
  const [ownerRid, sessionId, gen, reason] = decoded.value as unknown[];
  if (!isName(ownerRid) || !isName(sessionId) || !isCount(gen) || !isStr(reason)) return undefined;
  return { ownerRid, sessionId, gen, reason };
}

export interface SessionTurnDeps {
  readonly self: NodeRun;
  readonly link: MeshLink;
  readonly pending: PendingRequests;
}

/**
 * The route an Actor is held on here, as a bind's answer carries it: `[type, rid, nodeGeneration, AOG, OLG,
 * objectGeneration]`.
 */
export function heldRouteValue(a: Activation, self: NodeRun): unknown[] {
  const { authorityOwnerGeneration, ownerLeaseGeneration, objectGeneration } = a.authority;
  return [
    a.cls.type,
    self.rid,
    self.nodeGeneration,
    authorityOwnerGeneration,
    ownerLeaseGeneration,
    objectGeneration,
  ];
}

/** The session side's runtime turns (see `RuntimeTurnBuilder`). */
export function sessionTurns(deps: SessionTurnDeps): RuntimeTurnBuilder {
  return (a: Activation, call: InboundObjectCall) => {
    const what = `${call.packet} to ${a.key.kind} '${a.key.id}'`;
    const sessions = a.sessions;
    switch (call.packet) {
      case SESSION_BIND_PACKET: {
        const bind = readBind(call.payload);
        if (bind === undefined) return new ZLinkError('ProtocolError', `${what}: malformed payload`);
        if (sessions === undefined) return onlyActors(what);
        return async () => {
          const { previous, binding } = bind;
          const { self } = deps;
          // A rebind from elsewhere: the old owner's binding goes first, and the answer waits for it.
          if (previous && (previous.rid !== self.rid || previous.nodeGeneration !== self.nodeGeneration))
            await tombstone(deps, previous, a.key.id, binding).catch(() => undefined);
          sessions.bind(binding);
          return heldRouteValue(a, self);
        };
      }
      case SESSION_UNBIND_PACKET:
      case SESSION_CLOSED_PACKET: {
        const end = readEnd(call.payload);
        if (end === undefined) return new ZLinkError('ProtocolError', `${what}: malformed payload`);
        if (sessions === undefined) return onlyActors(what);
        const closed = call.packet === SESSION_CLOSED_PACKET;
        return async () => {
          const removed = sessions.unbind(end.ownerRid, end.sessionId, end.gen);
          if (closed && removed && a.cls.hooks.onSessionClosed) {
            const session = { id: removed.sessionId, listener: removed.listener, ownerRid: removed.ownerRid };
            await userCode('onSessionClosed', () => a.hook('onSessionClosed', a.scope, session, end.reason));
          }
          return null;
        };
      }
      case SESSION_DROPPED_PACKET:
      case SESSION_RESUMED_PACKET: {
        const note = readEnd(call.payload);
        if (note === undefined) return new ZLinkError('ProtocolError', `${what}: malformed payload`);
        if (sessions === undefined) return onlyActors(what);
        const dropped = call.packet === SESSION_DROPPED_PACKET;
        const hook = dropped ? 'onSessionDropped' : 'onSessionResumed';
        return async () => {
          // Only a binding it still holds (a late notice of a replaced binding is nobody's).
          const b = sessions.find(note.ownerRid, note.sessionId, note.gen);
          if (b !== undefined && a.cls.hooks[hook]) {
            const session = { id: b.sessionId, listener: b.listener, ownerRid: b.ownerRid };
            await userCode(hook, () =>
              dropped ? a.hook(hook, a.scope, session, note.reason) : a.hook(hook, a.scope, session),
            );
          }
          return null;
        };
      }
      default:
        return undefined;
    }
  };
}

function onlyActors(what: string): ZLinkError {
  return new ZLinkError('InvalidOperation', `${what}: only an Actor is bound to sessions`, {
    details: { reason: 'wrongKind' },
  });
}

/**
 * The tombstone of a rebind: the previous owner run drops the binding, and answers once it has. A
 * previous owner that is gone holds nothing any more; one that does not answer in time is given up
 * on (its binding can no longer reach the session: the Session owner switched to the new route).
 */
function tombstone(
  deps: SessionTurnDeps,
  previous: NodeRun,
  actorId: string,
  binding: ActorBinding,
): Promise<unknown> {
  if (!deps.link.isReady(previous.rid, previous.nodeGeneration)) return Promise.resolve();
  return askPeer(
    deps,
    previous.rid,
    (correlation) =>
      encodeSessionUnbind({
        correlation,
        origin: deps.self,
        actorId,
        sessionOwnerRid: binding.ownerRid,
        sessionId: binding.sessionId,
        bindingGeneration: binding.bindingGeneration,
      }),
    SESSION_UNBIND_TIMEOUT_MS,
    `tombstone of session '${binding.sessionId}' on actor '${actorId}'`,
  );
}
