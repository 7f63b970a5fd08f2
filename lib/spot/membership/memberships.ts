import { ZLinkError } from '../../core/errors.js';
import type { ObjectKind } from '../../core/kinds.js';
import type { AuthorityRecord } from '../../core/ports/index.js';
import type { ActorRef, DeactivationReason, SpotRef } from '../../core/objects/index.js';
import type { ObjectSubmission } from '../caller/index.js';
import { type Activation, objectRef, staleRef } from '../owner/index.js';
import type { Clock } from '../resolve/index.js';
import type { MoveRequest, RelocationResult } from '../relocation/index.js';
import { JOIN_PACKET, LEAVE_PACKET, MEMBER_PACKET, memberSubmission } from './member-packets.js';
import { alreadyMember } from './member-turns.js';
import { NOTICE_TIMEOUT_MS } from '../timing/index.js';

/** An object named by id, or by a ref (whose incarnation is then checked). */
export interface MemberTarget {
  readonly id: string;
  readonly objectGeneration: number | undefined;
}

/** What membership changes need of the object layer. */
export interface MembershipsDeps {
  readonly mesh: string;
  readonly clock: Clock;
  /** A call by global id (the object caller: cached route, Message Follow, per-sender order). */
  call(sub: ObjectSubmission): Promise<unknown>;
  /**
   * The authority record of (`kind`, `id`), read once: `NotFound` when none, `Unavailable` when the store is
   * down.
   */
  authority(kind: ObjectKind, id: string, what: string): Promise<AuthorityRecord>;
  relocate(req: MoveRequest): Promise<RelocationResult>;
}

/**
 * Actors in Spots (docs/decisions.md "Actors in Spots"): an Actor joins a Spot on the Spot's owner —
 * moved there first when it lives elsewhere — so a Spot and its members run side by side and move
 * together; the Spot hears each join (`onActorJoin`, which may refuse it) and each leave
 * (`onActorLeave`). Each side keeps its half (the Actor its Spot, the Spot its members) and changes it
 * only in its own turn, reached by a runtime call by id; nothing is written to a store.
 */
export class Memberships {
  constructor(private readonly deps: MembershipsDeps) {}

  /**
   * Makes the Actor a member of the Spot: the Actor moves to the Spot's owner when it lives elsewhere
   * (its class must be relocatable), claims the Spot (an Actor belongs to one Spot at a time), then the
   * Spot runs `onActorJoin(ctx, actorRef)`; resolves with both refs once the Spot took it. Ends
   * `InvalidOperation` (a ref of another incarnation — `staleRef` —, a member of another Spot —
   * `alreadyMember` —, an Actor class that cannot move), `NotFound` (either is missing, or the Spot's
   * owner hosts no such Actor type), `Unavailable` (the move to the Spot's owner aborted —
   * `details.reason: 'colocation'` — or either is unreachable), `RemoteError` with what `onActorJoin`
   * threw (the join is undone), `Timeout`. A join of a member to its own Spot resolves as it is.
   */
  async join(
    actor: MemberTarget,
    spot: MemberTarget,
    timeoutMs: number,
  ): Promise<{ readonly actor: ActorRef; readonly spot: SpotRef }> {
    const what = `join actor '${actor.id}' to spot '${spot.id}'`;
    const deadline = this.deps.clock.now() + timeoutMs;
    const spotRecord = await this.current('spot', spot, what);
    let actorRecord = await this.current('actor', actor, what);
    let actorRid = actorRecord.owner.rid;
    if (!sameRun(actorRecord, spotRecord)) {
      const moved = await this.deps
        .relocate({
          kind: 'actor',
          id: actor.id,
          objectGeneration: actorRecord.objectGeneration,
          target: spotRecord.owner.rid,
          timeoutMs: this.left(deadline, what),
        })
        .catch((error: unknown) => {
          // A member of another Spot does not move away from it: the join is refused as the claim would be.
          const spotOf = memberOf(error);
          if (spotOf === undefined) throw error;
          throw alreadyMember(actor.id, spotOf);
        });
      if (moved.outcome === 'aborted')
        throw new ZLinkError(
          'Unavailable',
          `${what}: the actor could not move to the spot's owner '${spotRecord.owner.rid}': ${moved.reason}`,
          { details: { reason: 'colocation', code: moved.code } },
        );
      actorRid = moved.owner;
      actorRecord = { ...actorRecord, owner: { ...actorRecord.owner, rid: moved.owner } };
    }
    const gen = actorRecord.objectGeneration;
    await this.request('actor', actor.id, MEMBER_PACKET, ['claim', spot.id], this.left(deadline, what));
    const joining = [actor.id, gen, actorRecord.type, actorRid];
    try {
      await this.request('spot', spot.id, JOIN_PACKET, joining, this.left(deadline, what));
    } catch (error) {
      // Refused, or not known to have joined: the claim goes before the join ends (a join the Spot did
      // take stays on the Spot alone until the Actor ends; see decisions). Only this Spot's claim goes.
      const release = ['release', spot.id];
      await this.request('actor', actor.id, MEMBER_PACKET, release, NOTICE_TIMEOUT_MS).catch(() => undefined);
      throw error;
    }
    const { mesh } = this.deps;
    return {
      actor: objectRef({ mesh, kind: 'actor', id: actor.id }, actorRecord.type, gen, actorRid) as ActorRef,
      spot: objectRef(
        { mesh, kind: 'spot', id: spot.id },
        spotRecord.type,
        spotRecord.objectGeneration,
        spotRecord.owner.rid,
      ) as SpotRef,
    };
  }

  /**
   * Takes the Actor out of its Spot: the Actor lets go of it, then the Spot runs
   * `onActorLeave(ctx, actorId, 'left')`; resolves with the id of the Spot it left. Ends
   * `InvalidOperation` when the Actor is in no Spot (`notMember`) or the ref is stale, `NotFound` when
   * the Actor is missing, `RemoteError` with what `onActorLeave` threw (it has left all the same),
   * `Unavailable`, `Timeout`. A Spot that is gone meanwhile is not waited for.
   */
  async leave(actor: MemberTarget, timeoutMs: number): Promise<string> {
    const what = `leave: actor '${actor.id}'`;
    const deadline = this.deps.clock.now() + timeoutMs;
    if (actor.objectGeneration !== undefined) await this.current('actor', actor, what);
    const released = await this.request(
      'actor',
      actor.id,
      MEMBER_PACKET,
      ['release', null],
      this.left(deadline, what),
    );
    if (!Array.isArray(released))
      throw new ZLinkError('InvalidOperation', `${what}: the actor is in no spot`, {
        details: { reason: 'notMember' },
      });
    const [spot, gen] = released as [string, number];
    const leaving = [actor.id, gen, 'left'];
    await this.request('spot', spot, LEAVE_PACKET, leaving, this.left(deadline, what)).catch(
      (error: unknown) => {
        if (!(error instanceof ZLinkError && error.code === 'NotFound')) throw error;
      },
    );
    return spot;
  }

  /**
   * An activation ended here for good (not moved): a member Actor's Spot hears it leave
   * (`onActorLeave(ctx, id, reason)`), a Spot's members let go of it. Sent, not awaited: a Spot or
   * member that is gone too needs no word.
   */
  deactivated(a: Activation, reason: DeactivationReason): void {
    if (reason === 'relocated') return;
    const m = a.membership;
    if (a.key.kind === 'actor' && m.spot !== undefined) {
      const leave = [a.key.id, a.authority.objectGeneration, reason];
      this.notice('spot', m.spot, LEAVE_PACKET, leave);
    }
    if (a.key.kind === 'spot')
      for (const id of m.joined.keys()) this.notice('actor', id, MEMBER_PACKET, ['release', a.key.id]);
  }

  private notice(kind: ObjectKind, id: string, packet: string, items: readonly unknown[]): void {
    void this.deps
      .call(memberSubmission('send', kind, id, packet, items, NOTICE_TIMEOUT_MS))
      .catch(() => undefined);
  }

  /** The record of an object that must be Ready, of the incarnation a ref names. */
  private async current(kind: ObjectKind, target: MemberTarget, what: string): Promise<AuthorityRecord> {
    const record = await this.deps.authority(kind, target.id, what);
    if (target.objectGeneration !== undefined && target.objectGeneration !== record.objectGeneration)
      throw staleRef(what, target.objectGeneration, record.objectGeneration);
    if (record.state !== 'ready')
      throw new ZLinkError('Unavailable', `${what}: the ${kind} '${target.id}' is ${record.state}`, {
        details: { reason: record.state },
      });
    return record;
  }

  private request(
    kind: ObjectKind,
    id: string,
    packet: string,
    items: readonly unknown[],
    timeoutMs: number,
  ): Promise<unknown> {
    return this.deps.call(memberSubmission('request', kind, id, packet, items, timeoutMs));
  }

  /** What is left of the deadline; `Timeout` once it passed (thrown inside the async step that asks). */
  private left(deadline: number, what: string): number {
    const left = deadline - this.deps.clock.now();
    if (left <= 0) throw new ZLinkError('Timeout', `${what}: the deadline passed`);
    return left;
  }
}

/** The Spot a move refused for its member rule names (`memberMove`); `undefined` for any other error. */
function memberOf(error: unknown): string | undefined {
  if (!(error instanceof ZLinkError) || error.code !== 'InvalidOperation') return undefined;
  const details = error.details as { reason?: unknown; spot?: unknown } | undefined;
  return details?.reason === 'member' && typeof details.spot === 'string' ? details.spot : undefined;
}

const sameRun = (a: AuthorityRecord, b: AuthorityRecord): boolean =>
  a.owner.rid === b.owner.rid && a.owner.nodeGeneration === b.owner.nodeGeneration;
