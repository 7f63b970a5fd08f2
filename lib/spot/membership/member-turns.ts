import { ZLinkError } from '../../core/errors.js';
import {
  type Activation,
  type InboundObjectCall,
  objectRef,
  runtimeCallRunner,
  userCode,
} from '../owner/index.js';
import {
  JOIN_PACKET,
  LEAVE_PACKET,
  MEMBER_PACKET,
  readJoin,
  readLeave,
  readMember,
} from './member-packets.js';

/** The membership side's runtime turns, and a runner of them alone (for tests of the owner side). */
export const runRuntimeCall = runtimeCallRunner([memberTurn]);

/**
 * What the turn does, or why the call is refused before it queues; `undefined` for a packet not membership's.
 */
export function memberTurn(a: Activation, call: InboundObjectCall): (() => unknown) | ZLinkError | undefined {
  const what = `${call.packet} to ${a.key.kind} '${a.key.id}'`;
  const malformed = () => new ZLinkError('ProtocolError', `${what}: malformed payload`);
  const m = a.membership;
  switch (call.packet) {
    case JOIN_PACKET: {
      const join = readJoin(call.payload);
      if (join === undefined) return malformed();
      if (a.key.kind !== 'spot') return notThisKind(what, 'only a Spot takes members');
      return async () => {
        // The same incarnation asking again (a join retried after a lost answer) is a member already.
        if (m.joined.get(join.actorId) === join.actorGeneration) return null;
        const actor = objectRef(
          { mesh: a.key.mesh, kind: 'actor', id: join.actorId },
          join.actorType,
          join.actorGeneration,
          join.actorRid,
        );
        // Throwing refuses the join: the joiner gets what was thrown, and nothing changed.
        if (a.cls.hooks.onActorJoin)
          await userCode('onActorJoin', () => a.hook('onActorJoin', a.scope, actor));
        m.joined.delete(join.actorId);
        m.joined.set(join.actorId, join.actorGeneration);
        return null;
      };
    }
    case LEAVE_PACKET: {
      const leave = readLeave(call.payload);
      if (leave === undefined) return malformed();
      if (a.key.kind !== 'spot') return notThisKind(what, 'only a Spot has members');
      return async () => {
        const gen = m.joined.get(leave.actorId);
        // An older incarnation's leave never removes a newer member of the same id
        // (docs/protocol.md#where-objectgeneration-counts).
        if (gen === undefined || (leave.actorGeneration !== 0 && gen !== leave.actorGeneration)) return false;
        m.joined.delete(leave.actorId);
        // It has left whatever the hook does; what the hook throws reaches the caller of `leave`.
        if (a.cls.hooks.onActorLeave)
          await userCode('onActorLeave', () => a.hook('onActorLeave', a.scope, leave.actorId, leave.reason));
        return true;
      };
    }
    case MEMBER_PACKET: {
      const member = readMember(call.payload);
      if (member === undefined) return malformed();
      if (a.key.kind !== 'actor') return notThisKind(what, 'only an Actor is a member');
      return () => {
        if (member.op === 'claim') {
          if (m.spot !== undefined && m.spot !== member.spot) throw alreadyMember(a.key.id, m.spot);
          m.spot = member.spot;
          return null;
        }
        const was = m.spot;
        if (was === undefined || (member.spot !== undefined && member.spot !== was)) return null;
        m.spot = undefined;
        return [was, a.authority.objectGeneration];
      };
    }
    default:
      return undefined;
  }
}

/** An Actor asked to join a Spot while it is a member of another (`alreadyMember`). */
export function alreadyMember(actorId: string, spot: string): ZLinkError {
  return new ZLinkError(
    'InvalidOperation',
    `actor '${actorId}' is a member of spot '${spot}' already: it must leave it first`,
    { details: { reason: 'alreadyMember', spot } },
  );
}

function notThisKind(what: string, why: string): ZLinkError {
  return new ZLinkError('InvalidOperation', `${what}: ${why}`, { details: { reason: 'wrongKind' } });
}
