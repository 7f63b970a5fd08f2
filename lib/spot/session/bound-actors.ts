import type { NodeRun } from '../../core/ports/index.js';
import { askPeer } from '../caller/index.js';
import {
  type Activation,
  type ActorBinding,
  type BindingPusher,
  type RoomPusher,
  heldRoute,
} from '../owner/index.js';
import {
  type SessionSealRecord,
  encodeSessionBindingEnded,
  encodeSessionPush,
  encodeSessionRoomPush,
  encodeSessionRoute,
  encodeSessionSeal,
  encodeSessionSealReply,
} from '../wire/index.js';
import type { MoveSessions } from '../relocation/index.js';
import { runtimeCall } from './owner-bindings.js';
import type { SessionDeps, SessionSink } from './session-objects.js';
import { SESSION_CLOSED_PACKET, endPayload, heldRouteValue } from './session-turns.js';

// A bound Actor's owner and its Session owners after the bind: the Actor's Pushes and its end toward
// each session, a lost run on either side, and the seal and route of a bound Actor's move.

/**
 * An Actor's Push, or its incarnation's end, toward one binding, and a Spot's Push toward the sessions of
 * its members on one Session owner run: the local host for a session owned here, else one record to its
 * owner run (on the same link, so the end travels behind the Pushes, and a Spot's Push keeps its place
 * among its members' own: docs/protocol.md#room-pushes).
 */
export function bindingPusher(deps: SessionDeps): BindingPusher & RoomPusher {
  const { self, link } = deps;
  const toOwner = (owner: NodeRun, here: (sink: SessionSink) => void, record: () => Uint8Array): boolean => {
    if (owner.rid === self.rid && owner.nodeGeneration === self.nodeGeneration) {
      if (deps.sessions === undefined) return false;
      here(deps.sessions);
      return true;
    }
    try {
      return link.send({ rid: owner.rid, generation: owner.nodeGeneration }, record());
    } catch {
      return false; // its Session owner's run is gone: the session has ended with it
    }
  };
  const runOf = (b: ActorBinding): NodeRun => ({ rid: b.ownerRid, nodeGeneration: b.ownerGeneration });
  const identity = (binding: ActorBinding, actorId: string) => ({
    listener: binding.listener,
    sessionId: binding.sessionId,
    bindingGeneration: binding.bindingGeneration,
    actorId,
  });
  return {
    push: (binding, actorId, packet, payload) => {
      const r = { ...identity(binding, actorId), packet, payload };
      return toOwner(
        runOf(binding),
        (sink) => sink.pushed(r),
        () => encodeSessionPush(r),
      );
    },
    ended: (binding, actorId) => {
      const r = identity(binding, actorId);
      return toOwner(
        runOf(binding),
        (sink) => sink.bindingEnded(r),
        () => encodeSessionBindingEnded(r),
      );
    },
    pushRoom: (owner, spotId, packet, payload, targets) => {
      const r = { spotId, packet, payload, targets };
      return toOwner(
        owner,
        (sink) => sink.roomPushed(r),
        () => encodeSessionRoomPush(r),
      );
    },
  };
}

/**
 * Node run `run` left the mesh. As a Session owner's peer: bindings routed to it are lost. As an Actor
 * owner: every Actor here bound to a session of that run hears the end (`onSessionClosed`, reason
 * `ownerLost`) in a turn of its own, as if the session had said so.
 */
export function runEnded(deps: SessionDeps, run: NodeRun, reason: string): void {
  deps.sessions?.ownerDown(run, reason);
  const host = deps.host;
  if (host === undefined) return;
  for (const a of host.activations()) {
    for (const b of a.sessions?.image() ?? []) {
      if (b.ownerRid !== run.rid || b.ownerGeneration !== run.nodeGeneration) continue;
      const payload = endPayload(b.ownerRid, b.sessionId, b.bindingGeneration, 'ownerLost');
      host.dispatch(
        runtimeCall(deps, a.key.id, SESSION_CLOSED_PACKET, payload, undefined, heldRoute(a, deps.self)),
        {
          ok: () => undefined,
          error: () => undefined,
        },
      );
    }
  }
}

const isHere = (self: NodeRun, b: ActorBinding): boolean =>
  b.ownerRid === self.rid && b.ownerGeneration === self.nodeGeneration;

/**
 * A moving Actor's sessions (docs/protocol.md#bound-actors-that-move): 42 to seal each binding, 44 to end the
 * seal.
 */
export function moveSessions(deps: SessionDeps): MoveSessions {
  const { self, link } = deps;
  return {
    seal: async (a: Activation, relocationId: string, ms: number) => {
      const asks = (a.sessions?.image() ?? []).map((b) => {
        const r = { ...identity(b), relocationId, actorId: a.key.id };
        if (isHere(self, b)) return Promise.resolve(deps.sessions?.sealed(r));
        const what = `seal session '${b.sessionId}' for the move of actor '${a.key.id}'`;
        return askPeer(
          deps,
          b.ownerRid,
          (correlation) => encodeSessionSeal({ ...r, correlation, origin: self }),
          ms,
          what,
        );
      });
      await Promise.all(asks);
    },
    route: (a: Activation, relocationId: string, outcome: 'commit' | 'abort') => {
      for (const b of a.sessions?.image() ?? []) {
        const r = {
          ...identity(b),
          relocationId,
          actorId: a.key.id,
          objectGeneration: a.authority.objectGeneration,
          outcome,
          route: outcome === 'commit' ? heldRouteValue(a, self) : undefined,
        };
        if (isHere(self, b)) deps.sessions?.routed(r);
        // One-way and never retried: an owner that is gone has no session to route.
        else link.answer(b.ownerRid, encodeSessionRoute(r));
      }
    },
  };
}

function identity(b: ActorBinding): { listener: string; sessionId: string; bindingGeneration: number } {
  return { listener: b.listener, sessionId: b.sessionId, bindingGeneration: b.bindingGeneration };
}

/** A seal from a moving Actor's source: held from now on, and answered behind what was relayed before. */
export function answerSessionSeal(deps: SessionDeps, r: SessionSealRecord): void {
  deps.sessions?.sealed(r);
  deps.link.answer(r.origin.rid, encodeSessionSealReply(r.correlation, r.origin.nodeGeneration));
}
