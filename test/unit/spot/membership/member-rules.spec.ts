import { describe, expect, it } from '@jest/globals';
import {
  type AuthorityRecord,
  type ObjectKind,
  ZLinkError,
  decodePayload,
  encodePayload,
} from '../../../../lib/core/index.js';
import type { Activation, InboundObjectCall } from '../../../../lib/spot/owner/index.js';
import { ObjectMembership } from '../../../../lib/spot/owner/activation-membership.js';
import type { ObjectSubmission } from '../../../../lib/spot/caller/index.js';
import { Memberships } from '../../../../lib/spot/membership/index.js';
import {
  JOIN_PACKET,
  LEAVE_PACKET,
  MEMBER_PACKET,
  readJoin,
  readLeave,
  readMember,
} from '../../../../lib/spot/membership/member-packets.js';
import { memberTurn } from '../../../../lib/spot/membership/member-turns.js';
import type { MoveRequest, RelocationResult } from '../../../../lib/spot/relocation/index.js';
import { FakeClock, MESH } from '../fixtures.js';

/**
 * The rules of Actors in Spots (docs/decisions.md "Actors in Spots"), on the membership room alone:
 * the runtime packets' shapes, each side's turn (a Spot's members by incarnation, an Actor's one
 * Spot), and the join and leave requests as the calls they make.
 */

const bytes = (items: readonly unknown[]): Uint8Array => encodePayload(items);

/** Just what a membership turn reads of an activation; hooks recorded in `heard`. */
function activation(
  kind: ObjectKind,
  id: string,
  hooks: { onActorJoin?: (ref: unknown) => void; onActorLeave?: (id: string, why: string) => void } = {},
): { a: Activation; m: ObjectMembership; heard: string[] } {
  const m = new ObjectMembership();
  const heard: string[] = [];
  const a = {
    key: { mesh: MESH, kind, id },
    membership: m,
    authority: { objectGeneration: 7 },
    scope: {},
    cls: { hooks: { onActorJoin: !!hooks.onActorJoin, onActorLeave: !!hooks.onActorLeave } },
    hook: (name: string, _scope: unknown, ...args: unknown[]) => {
      heard.push(`${name} ${args.map((x) => JSON.stringify(x)).join(' ')}`);
      if (name === 'onActorJoin') return hooks.onActorJoin?.(args[0]);
      return hooks.onActorLeave?.(args[0] as string, args[1] as string);
    },
  } as unknown as Activation;
  return { a, m, heard };
}

function call(packet: string, items: readonly unknown[] | Uint8Array): InboundObjectCall {
  const payload = items instanceof Uint8Array ? items : bytes(items);
  return { packet, payload } as unknown as InboundObjectCall;
}

/** Runs the turn `memberTurn` admits; what it returned, or what refused it. */
async function turn(a: Activation, c: InboundObjectCall): Promise<unknown> {
  const t = memberTurn(a, c);
  if (t === undefined || t instanceof ZLinkError) return t;
  try {
    return await t();
  } catch (error) {
    return error;
  }
}

describe('membership packets', () => {
  it('reads a join, a leave and a member op back as they were written', () => {
    expect(readJoin(bytes(['p1', 3, 'Player', 'node-a']))).toEqual({
      actorId: 'p1',
      actorGeneration: 3,
      actorType: 'Player',
      actorRid: 'node-a',
    });
    expect(readLeave(bytes(['p1', 0, 'destroyed']))).toEqual({
      actorId: 'p1',
      actorGeneration: 0,
      reason: 'destroyed',
    });
    expect(readMember(bytes(['claim', 'room']))).toEqual({ op: 'claim', spot: 'room' });
    expect(readMember(bytes(['release', null]))).toEqual({ op: 'release', spot: undefined });
  });

  it('refuses a claim of no Spot, a leave for a reason it does not know, and short or odd payloads', () => {
    expect(readMember(bytes(['claim', null]))).toBeUndefined();
    expect(readMember(bytes(['grab', 'room']))).toBeUndefined();
    expect(readLeave(bytes(['p1', 1, 'bored']))).toBeUndefined();
    expect(readLeave(bytes(['p1', -1, 'left']))).toBeUndefined();
    expect(readJoin(bytes(['p1', 3, 'Player']))).toBeUndefined();
    expect(readJoin(new Uint8Array([0xc1]))).toBeUndefined();
  });
});

describe("a Spot's members (its join and leave turns)", () => {
  it('a join runs onActorJoin once and records the incarnation; the same incarnation again changes nothing', async () => {
    const { a, m, heard } = activation('spot', 'room', { onActorJoin: () => undefined });
    expect(await turn(a, call(JOIN_PACKET, ['p1', 3, 'Player', 'node-a']))).toBeNull();
    expect(await turn(a, call(JOIN_PACKET, ['p1', 3, 'Player', 'node-a']))).toBeNull();
    expect(heard).toHaveLength(1);
    expect(heard[0]).toContain('"id":"p1"');
    expect([...m.joined]).toEqual([['p1', 3]]);
  });

  it('a newer incarnation of a member joins anew, last in join order', async () => {
    const { a, m } = activation('spot', 'room');
    await turn(a, call(JOIN_PACKET, ['p1', 3, 'Player', 'node-a']));
    await turn(a, call(JOIN_PACKET, ['p2', 1, 'Player', 'node-a']));
    await turn(a, call(JOIN_PACKET, ['p1', 4, 'Player', 'node-a']));
    expect([...m.joined]).toEqual([
      ['p2', 1],
      ['p1', 4],
    ]);
  });

  it('onActorJoin throwing refuses the join: the joiner gets what it threw, and nothing changed', async () => {
    const { a, m } = activation('spot', 'room', {
      onActorJoin: () => {
        throw new Error('room full');
      },
    });
    const out = await turn(a, call(JOIN_PACKET, ['p1', 3, 'Player', 'node-a']));
    expect(out).toBeInstanceOf(Error);
    expect(String((out as Error).message)).toContain('room full');
    expect(m.joined.size).toBe(0);
  });

  it("an older incarnation's leave never removes a newer member; 0 means whichever is the member", async () => {
    const { a, m, heard } = activation('spot', 'room', { onActorLeave: () => undefined });
    m.joined.set('p1', 4);
    expect(await turn(a, call(LEAVE_PACKET, ['p1', 3, 'destroyed']))).toBe(false);
    expect(m.has('p1')).toBe(true);
    expect(await turn(a, call(LEAVE_PACKET, ['p1', 0, 'left']))).toBe(true);
    expect(m.has('p1')).toBe(false);
    expect(heard).toEqual(['onActorLeave "p1" "left"']);
    expect(await turn(a, call(LEAVE_PACKET, ['p1', 0, 'left']))).toBe(false);
  });

  it('only a Spot takes members, and a malformed payload is refused before it queues', () => {
    const { a: actor } = activation('actor', 'p1');
    const refused = memberTurn(actor, call(JOIN_PACKET, ['p2', 1, 'Player', 'node-a']));
    expect(refused).toBeInstanceOf(ZLinkError);
    expect((refused as ZLinkError).code).toBe('InvalidOperation');
    const { a: spot } = activation('spot', 'room');
    const malformed = memberTurn(spot, call(JOIN_PACKET, ['p2']));
    expect((malformed as ZLinkError).code).toBe('ProtocolError');
    expect(memberTurn(spot, call('hello', []))).toBeUndefined();
  });
});

describe("an Actor's one Spot (its member turn)", () => {
  it('claims a Spot, again the same one, but never a second one (alreadyMember)', async () => {
    const { a, m } = activation('actor', 'p1');
    expect(await turn(a, call(MEMBER_PACKET, ['claim', 'room']))).toBeNull();
    expect(await turn(a, call(MEMBER_PACKET, ['claim', 'room']))).toBeNull();
    const refused = (await turn(a, call(MEMBER_PACKET, ['claim', 'hall']))) as ZLinkError;
    expect(refused.code).toBe('InvalidOperation');
    expect(refused.details).toEqual({ reason: 'alreadyMember', spot: 'room' });
    expect(m.spot).toBe('room');
  });

  it("a release of another Spot leaves the claim; a release of any answers with the Spot and the Actor's incarnation", async () => {
    const { a, m } = activation('actor', 'p1');
    m.spot = 'room';
    expect(await turn(a, call(MEMBER_PACKET, ['release', 'hall']))).toBeNull();
    expect(m.spot).toBe('room');
    expect(await turn(a, call(MEMBER_PACKET, ['release', null]))).toEqual(['room', 7]);
    expect(m.spot).toBeUndefined();
    expect(await turn(a, call(MEMBER_PACKET, ['release', null]))).toBeNull();
  });
});

/** A record of the state and owner a join or leave reads. */
function record(type: string, rid: string, objectGeneration = 1, state = 'ready'): AuthorityRecord {
  return {
    type,
    state,
    objectGeneration,
    owner: { rid, nodeGeneration: `${rid}-g1` },
  } as unknown as AuthorityRecord;
}

/** `Memberships` over scripted records and calls: each call is logged as `kind id packet [items]`. */
function memberships(
  records: Record<string, AuthorityRecord>,
  answer: (sub: ObjectSubmission, items: unknown[]) => unknown = () => null,
  relocate: (req: MoveRequest) => Promise<RelocationResult> = () => Promise.reject(new Error('no move')),
): { ms: Memberships; calls: string[]; moves: MoveRequest[] } {
  const calls: string[] = [];
  const moves: MoveRequest[] = [];
  const ms = new Memberships({
    mesh: MESH,
    clock: new FakeClock(),
    call: async (sub) => {
      const decoded = decodePayload(sub.payload);
      const items = (decoded.ok ? decoded.value : []) as unknown[];
      calls.push(`${sub.messageKind} ${sub.objectKind} ${sub.id} ${sub.packet} ${JSON.stringify(items)}`);
      const out = answer(sub, items);
      if (out instanceof Error) throw out;
      return out;
    },
    authority: async (kind, id) => {
      const r = records[`${kind}:${id}`];
      if (r === undefined) throw new ZLinkError('NotFound', `no such ${kind}`);
      return r;
    },
    relocate: (req) => (moves.push(req), relocate(req)),
  });
  return { ms, calls, moves };
}

const target = (id: string, objectGeneration?: number) => ({ id, objectGeneration });

describe('joining and leaving (the requests)', () => {
  it('on one run: the Actor claims the Spot first, then the Spot takes the join; no move', async () => {
    const { ms, calls, moves } = memberships({
      'spot:room': record('Room', 'node-a'),
      'actor:p1': record('Player', 'node-a', 3),
    });
    const refs = await ms.join(target('p1'), target('room'), 1000);
    expect(moves).toEqual([]);
    expect(calls).toEqual([
      `request actor p1 ${MEMBER_PACKET} ["claim","room"]`,
      `request spot room ${JOIN_PACKET} ["p1",3,"Player","node-a"]`,
    ]);
    expect(refs.actor).toMatchObject({ kind: 'actor', id: 'p1', objectGeneration: 3, rid: 'node-a' });
    expect(refs.spot).toMatchObject({ kind: 'spot', id: 'room', type: 'Room', rid: 'node-a' });
  });

  it("an Actor elsewhere moves to the Spot's owner first, and joins from there", async () => {
    const { ms, calls, moves } = memberships(
      { 'spot:room': record('Room', 'node-b'), 'actor:p1': record('Player', 'node-a', 3) },
      undefined,
      async () => ({ outcome: 'committed', owner: 'node-b' }) as unknown as RelocationResult,
    );
    const refs = await ms.join(target('p1'), target('room'), 1000);
    expect(moves).toMatchObject([{ kind: 'actor', id: 'p1', objectGeneration: 3, target: 'node-b' }]);
    expect(calls[1]).toBe(`request spot room ${JOIN_PACKET} ["p1",3,"Player","node-b"]`);
    expect(refs.actor.rid).toBe('node-b');
  });

  it('a move that aborts ends the join Unavailable (colocation); a member of another Spot that will not move, alreadyMember', async () => {
    const records = { 'spot:room': record('Room', 'node-b'), 'actor:p1': record('Player', 'node-a') };
    const aborted = memberships(
      records,
      undefined,
      async () => ({ outcome: 'aborted', code: 'Timeout', reason: 'slow' }) as unknown as RelocationResult,
    );
    await expect(aborted.ms.join(target('p1'), target('room'), 1000)).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'colocation', code: 'Timeout' },
    });
    const member = memberships(records, undefined, () =>
      Promise.reject(
        new ZLinkError('InvalidOperation', 'member', { details: { reason: 'member', spot: 'hall' } }),
      ),
    );
    await expect(member.ms.join(target('p1'), target('room'), 1000)).rejects.toMatchObject({
      code: 'InvalidOperation',
      details: { reason: 'alreadyMember', spot: 'hall' },
    });
    expect(aborted.calls).toEqual([]);
  });

  it("a Spot refusing the join: the Actor's claim of this Spot goes before the join ends with the refusal", async () => {
    const refusal = new ZLinkError('RemoteError', 'room full');
    const { ms, calls } = memberships(
      { 'spot:room': record('Room', 'node-a'), 'actor:p1': record('Player', 'node-a') },
      (sub) => (sub.packet === JOIN_PACKET ? refusal : null),
    );
    await expect(ms.join(target('p1'), target('room'), 1000)).rejects.toBe(refusal);
    expect(calls[2]).toBe(`request actor p1 ${MEMBER_PACKET} ["release","room"]`);
  });

  it('a ref of another incarnation, or an object not ready, is refused before any call', async () => {
    const { ms, calls } = memberships({
      'spot:room': record('Room', 'node-a', 2),
      'actor:p1': record('Player', 'node-a', 1, 'creating'),
    });
    await expect(ms.join(target('p1'), target('room', 1), 1000)).rejects.toMatchObject({
      code: 'InvalidOperation',
    });
    await expect(ms.join(target('p1'), target('room'), 1000)).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'creating' },
    });
    expect(calls).toEqual([]);
  });

  it('a leave releases the claim, then tells the Spot; an Actor in no Spot is notMember; a Spot gone is not waited for', async () => {
    const released = memberships({}, (sub) => (sub.packet === MEMBER_PACKET ? ['room', 3] : null));
    expect(await released.ms.leave(target('p1'), 1000)).toBe('room');
    expect(released.calls).toEqual([
      `request actor p1 ${MEMBER_PACKET} ["release",null]`,
      `request spot room ${LEAVE_PACKET} ["p1",3,"left"]`,
    ]);
    const none = memberships({}, () => null);
    await expect(none.ms.leave(target('p1'), 1000)).rejects.toMatchObject({
      code: 'InvalidOperation',
      details: { reason: 'notMember' },
    });
    const gone = memberships({}, (sub) =>
      sub.packet === MEMBER_PACKET ? ['room', 3] : new ZLinkError('NotFound', 'no such spot'),
    );
    expect(await gone.ms.leave(target('p1'), 1000)).toBe('room');
  });

  it('an ending activation tells the other side (sent, not awaited); a move tells nobody', () => {
    const { ms, calls } = memberships({});
    const { a: actor, m: am } = activation('actor', 'p1');
    am.spot = 'room';
    const { a: spot, m: sm } = activation('spot', 'room');
    sm.joined.set('p1', 3).set('p2', 1);
    ms.deactivated(actor, 'relocated');
    ms.deactivated(spot, 'relocated');
    expect(calls).toEqual([]);
    ms.deactivated(actor, 'destroyed');
    ms.deactivated(spot, 'shutdown');
    expect(calls).toEqual([
      `send spot room ${LEAVE_PACKET} ["p1",7,"destroyed"]`,
      `send actor p1 ${MEMBER_PACKET} ["release","room"]`,
      `send actor p2 ${MEMBER_PACKET} ["release","room"]`,
    ]);
  });
});
