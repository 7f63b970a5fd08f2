import { invalidArgument } from '../../core/errors.js';
import { encodePayload } from '../../core/wire/index.js';
import type { NodeRun } from '../../core/ports/index.js';
import { type ZLinkBoundSessions, type ZLinkSessionRef, packetProblem } from '../../core/objects/index.js';
import type { RoomPushTarget } from '../wire/index.js';
import type { ObjectMembership } from './activation-membership.js';
import type { ActorBinding, ObjectSessions } from './activation-sessions.js';

/** How a Spot's push reaches one Session owner run: one record for all its targets (or the host here). */
export interface RoomPusher {
  /** One room push to Session owner run `owner`; `false` if it could not be sent. */
  pushRoom(
    owner: NodeRun,
    spotId: string,
    packet: string,
    payload: Uint8Array,
    targets: readonly RoomPushTarget[],
  ): boolean;
}

/**
 * The bound sessions of member Actor `id` of the incarnation that joined (`objectGeneration`), when it
 * runs on this node; `undefined` for a member that does not (left behind by a failed member move) or is
 * ending.
 */
export type MemberSessions = (id: string, objectGeneration: number) => ObjectSessions | undefined;

/** The sessions a Spot reaches now, grouped by Session owner run, each session once. */
interface Reach {
  readonly owners: Map<string, { readonly run: NodeRun; readonly targets: RoomPushTarget[] }>;
  readonly refs: ZLinkSessionRef[];
}

/**
 * A Spot's `ctx.sessions` (docs/sessions.md#room-pushes): every session bound to one of its member
 * Actors that run beside it, read in the Spot's turn (a member's bindings change only in the member's
 * own turns, never during this one). A session bound to several members counts once, through the member
 * that joined first.
 */
export class SpotSessions implements ZLinkBoundSessions {
  constructor(
    private readonly spotId: string,
    private readonly membership: ObjectMembership,
    private readonly members: MemberSessions,
    private readonly pusher: RoomPusher | undefined,
  ) {}

  get size(): number {
    return this.reach().refs.length;
  }

  list(): readonly ZLinkSessionRef[] {
    return this.reach().refs;
  }

  /**
   * Bound as `ctx.push` on a Spot: one Push of `msg` to every session of `list()`, as one record per
   * Session owner run. Returns how many sessions it was handed to (0: no member has a session to reach,
   * or no Session owner could be sent to). Throws `InvalidArgument` for a packet that is not a non-empty
   * string or is under the runtime's `zlink:` prefix, members or not.
   */
  readonly push = (packet: string, msg: unknown): number => {
    const problem = packetProblem(packet);
    if (problem !== undefined) throw invalidArgument('packet', `${problem} (push of spot '${this.spotId}')`);
    const pusher = this.pusher;
    if (pusher === undefined || this.membership.joined.size === 0) return 0;
    const { owners } = this.reach();
    if (owners.size === 0) return 0;
    const payload = encodePayload(msg);
    let sent = 0;
    for (const { run, targets } of owners.values())
      if (pusher.pushRoom(run, this.spotId, packet, payload, targets)) sent += targets.length;
    return sent;
  };

  private reach(): Reach {
    const owners: Reach['owners'] = new Map();
    const refs: ZLinkSessionRef[] = [];
    const seen = new Set<string>();
    for (const [id, objectGeneration] of this.membership.joined) {
      const sessions = this.members(id, objectGeneration);
      if (sessions === undefined || sessions.size === 0) continue;
      for (const b of sessions.image()) {
        const runKey = `${b.ownerRid}\u0000${b.ownerGeneration}`;
        const sessionKey = `${runKey}\u0000${b.sessionId}`;
        if (seen.has(sessionKey)) continue;
        seen.add(sessionKey);
        let owner = owners.get(runKey);
        if (owner === undefined) {
          owner = { run: { rid: b.ownerRid, nodeGeneration: b.ownerGeneration }, targets: [] };
          owners.set(runKey, owner);
        }
        owner.targets.push(target(b, id));
        refs.push({ id: b.sessionId, listener: b.listener, ownerRid: b.ownerRid });
      }
    }
    return { owners, refs };
  }
}

function target(b: ActorBinding, actorId: string): RoomPushTarget {
  return { listener: b.listener, sessionId: b.sessionId, bindingGeneration: b.bindingGeneration, actorId };
}
