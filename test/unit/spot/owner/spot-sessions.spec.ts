import { describe, expect, it } from '@jest/globals';
import type { NodeRun } from '../../../../lib/core/ports/index.js';
import { ObjectMembership } from '../../../../lib/spot/owner/activation-membership.js';
import { type ActorBinding, ObjectSessions } from '../../../../lib/spot/owner/activation-sessions.js';
import { type RoomPusher, SpotSessions } from '../../../../lib/spot/owner/spot-sessions.js';
import type { RoomPushTarget } from '../../../../lib/spot/wire/index.js';

/**
 * A Spot's ctx.push (docs/sessions.md#room-pushes): every session bound to its members here, once each,
 * as one record per Session owner run; the count of sessions it was handed to.
 */

const binding = (owner: string, sessionId: string, bindingGeneration = 1): ActorBinding => ({
  ownerRid: owner,
  ownerGeneration: `${owner}-g1`,
  listener: 'game',
  sessionId,
  bindingGeneration,
});

function room(bound: Record<string, ActorBinding[]>, refuse: string[] = []) {
  const sent: { owner: NodeRun; targets: readonly RoomPushTarget[] }[] = [];
  const pusher: RoomPusher = {
    pushRoom: (owner, _spot, _packet, _payload, targets) => {
      if (refuse.includes(owner.rid)) return false;
      sent.push({ owner, targets });
      return true;
    },
  };
  const membership = new ObjectMembership();
  const members = new Map<string, ObjectSessions>();
  for (const [id, bindings] of Object.entries(bound)) {
    membership.joined.set(id, 1);
    const s = new ObjectSessions(id, undefined);
    for (const b of bindings) s.bind(b);
    members.set(id, s);
  }
  const sessions = new SpotSessions(
    'lobby',
    membership,
    (id, gen) => (gen === 1 ? members.get(id) : undefined),
    pusher,
  );
  return { sent, sessions, membership };
}

describe("a Spot's ctx.push", () => {
  it('hands one record per Session owner run, each session once, and returns how many sessions', () => {
    const { sent, sessions } = room({
      a: [binding('gw1', 's1')],
      b: [binding('gw2', 's2'), binding('gw1', 's3')],
      c: [binding('gw1', 's1')], // the same session bound to two members: reached once
    });
    expect(sessions.size).toBe(3);
    expect(sessions.list().map((r) => r.id)).toEqual(['s1', 's2', 's3']);
    expect(sessions.push('tick', { t: 1 })).toBe(3);
    expect(sent.map((s) => [s.owner.rid, s.targets.map((t) => `${t.actorId}/${t.sessionId}`)])).toEqual([
      ['gw1', ['a/s1', 'b/s3']],
      ['gw2', ['b/s2']],
    ]);
  });

  it('says 0 when no member has a session, when it has no members, and for an owner it could not reach', () => {
    expect(room({}).sessions.push('tick', 1)).toBe(0);
    expect(room({ a: [] }).sessions.push('tick', 1)).toBe(0);
    const partly = room({ a: [binding('gw1', 's1')], b: [binding('gw2', 's2')] }, ['gw2']);
    expect(partly.sessions.push('tick', 1)).toBe(1);
  });

  it('skips a member of another incarnation than the one that joined', () => {
    const { sessions, membership } = room({ a: [binding('gw1', 's1')] });
    membership.joined.set('a', 2);
    expect(sessions.push('tick', 1)).toBe(0);
  });

  it("refuses the runtime's zlink: prefix, members or not", () => {
    for (const { sessions } of [room({}), room({ a: [binding('gw1', 's1')] })])
      expect(() => sessions.push('zlink:session-closed', 1)).toThrow(
        expect.objectContaining({ code: 'InvalidArgument' }),
      );
  });
});
