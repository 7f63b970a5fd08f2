import { describe, expect, it } from '@jest/globals';
import { MAX_FOLLOW_HOPS, type NodeRun, ZLinkError } from '../../../../lib/core/index.js';
import { type ObjectRouteFences } from '../../../../lib/spot/wire/index.js';
import { FollowRoutes } from '../../../../lib/spot/relocation/index.js';
import { FakeClock, MESH, RUN_A, RUN_B } from '../fixtures.js';

/**
 * The Message Follow table of a move's source (docs/protocol.md#message-follow): only a committed route
 * relays, for the duration in force when it was installed, at most eight hops, the owner generation
 * growing each hop; a message for another incarnation is `InvalidOperation`, anything else that finds
 * no route in force `Unavailable`.
 */

const KEY = { mesh: MESH, kind: 'spot' as const, id: 'room-1' };
const fences = (
  owner: NodeRun,
  authorityOwnerGeneration: number,
  objectGeneration = 7,
): ObjectRouteFences => ({
  owner,
  objectGeneration,
  authorityOwnerGeneration,
  ownerLeaseGeneration: 1,
});
const SOURCE = fences(RUN_A, 1);
const TARGET = fences(RUN_B, 2);

function table(durationMs = 30_000): { clock: FakeClock; routes: FollowRoutes } {
  const clock = new FakeClock();
  return { clock, routes: new FollowRoutes(clock, durationMs) };
}

describe('FollowRoutes', () => {
  it('relays a message on the committed route to the new owner, one hop more', () => {
    const { routes } = table();
    const installed = routes.install(KEY, SOURCE, TARGET);
    expect(routes.decide('spot', 'room-1', SOURCE, 0)).toEqual({ tag: 'relay', route: installed, hops: 1 });
    expect(installed?.target).toBe(TARGET);
  });

  it('without a committed route, or with another route, the message ends Unavailable', () => {
    const { routes } = table();
    expect(routes.decide('spot', 'room-1', SOURCE, 0)).toEqual({
      tag: 'refuse',
      code: 'Unavailable',
      reason: 'noFollowRoute',
    });
    routes.install(KEY, SOURCE, TARGET);
    // Another object, another kind, another owner generation or lease: not this route's.
    for (const [kind, id, carried] of [
      ['spot', 'room-2', SOURCE],
      ['actor', 'room-1', SOURCE],
      ['spot', 'room-1', fences(RUN_A, 3)],
      ['spot', 'room-1', { ...SOURCE, ownerLeaseGeneration: 2 }],
      ['spot', 'room-1', fences({ rid: 'node-a', nodeGeneration: 'ga2' }, 1)],
    ] as const)
      expect(routes.decide(kind, id, carried, 0)).toMatchObject({ tag: 'refuse', reason: 'noFollowRoute' });
  });

  it('a message for another incarnation of the id is InvalidOperation', () => {
    const { routes } = table();
    routes.install(KEY, SOURCE, TARGET);
    expect(routes.decide('spot', 'room-1', fences(RUN_A, 1, 8), 0)).toEqual({
      tag: 'refuse',
      code: 'InvalidOperation',
      reason: 'generationMismatch',
    });
  });

  it('a route relays until its duration has passed, then goes (no timer of its own)', () => {
    const { clock, routes } = table(1000);
    routes.install(KEY, SOURCE, TARGET);
    clock.t += 999;
    expect(routes.decide('spot', 'room-1', SOURCE, 0).tag).toBe('relay');
    clock.t += 1;
    expect(routes.decide('spot', 'room-1', SOURCE, 0)).toMatchObject({ reason: 'followExpired' });
    expect(routes.size).toBe(0);
    expect(routes.decide('spot', 'room-1', SOURCE, 0)).toMatchObject({ reason: 'noFollowRoute' });
  });

  it('a duration changed at run time applies to routes installed after it; 0 installs nothing', () => {
    const { clock, routes } = table(1000);
    const early = routes.install(KEY, SOURCE, TARGET);
    routes.setDurationMs(5000);
    const later = routes.install({ ...KEY, id: 'room-2' }, SOURCE, TARGET);
    expect(early?.until).toBe(clock.t + 1000);
    expect(later?.until).toBe(clock.t + 5000);
    routes.setDurationMs(0);
    expect(routes.install({ ...KEY, id: 'room-3' }, SOURCE, TARGET)).toBeUndefined();
    expect(routes.decide('spot', 'room-3', SOURCE, 0)).toMatchObject({ reason: 'noFollowRoute' });
    expect(() => routes.setDurationMs(-1)).toThrow(ZLinkError);
    expect(() => new FollowRoutes(clock, 1.5)).toThrow(/messageFollowDurationMs/);
  });

  it('at most eight hops: the message that would take a ninth ends Unavailable', () => {
    const { routes } = table();
    routes.install(KEY, SOURCE, TARGET);
    expect(routes.decide('spot', 'room-1', SOURCE, MAX_FOLLOW_HOPS - 1)).toMatchObject({
      tag: 'relay',
      hops: MAX_FOLLOW_HOPS,
    });
    expect(routes.decide('spot', 'room-1', SOURCE, MAX_FOLLOW_HOPS)).toEqual({
      tag: 'refuse',
      code: 'Unavailable',
      reason: 'followHops',
    });
  });

  it('nine moves in a row: each node relays along its own route, and the ninth hop is refused', () => {
    const clock = new FakeClock();
    const runs = Array.from({ length: 10 }, (_, i) => ({ rid: `node-${i}`, nodeGeneration: 'g' }));
    const tables = runs.map(() => new FollowRoutes(clock, 30_000));
    // Move i: from runs[i] (authority owner generation i + 1) to runs[i + 1].
    for (let i = 0; i < 9; i++)
      tables[i]?.install(KEY, fences(runs[i] as NodeRun, i + 1), fences(runs[i + 1] as NodeRun, i + 2));
    let carried = fences(runs[0] as NodeRun, 1);
    let hops = 0;
    let at = 0;
    for (;;) {
      const decision = (tables[at] as FollowRoutes).decide('spot', 'room-1', carried, hops);
      if (decision.tag === 'refuse') {
        expect(decision).toMatchObject({ code: 'Unavailable', reason: 'followHops' });
        break;
      }
      carried = decision.route.target;
      hops = decision.hops;
      at++;
    }
    expect(hops).toBe(MAX_FOLLOW_HOPS);
    expect(at).toBe(MAX_FOLLOW_HOPS);
  });

  it('the owner generation grows with every hop, and a move keeps the incarnation, or install refuses', () => {
    const { routes } = table();
    expect(() => routes.install(KEY, SOURCE, fences(RUN_B, 1))).toThrow(/larger authority owner generation/);
    expect(() => routes.install(KEY, SOURCE, fences(RUN_B, 2, 8))).toThrow(/object generation/);
    expect(routes.size).toBe(0);
  });

  it('a move away, back and away again are separate routes; a second install of the same replaces it', () => {
    const { routes } = table();
    const first = routes.install(KEY, SOURCE, TARGET);
    const again = fences(RUN_A, 3);
    const second = routes.install(KEY, again, fences(RUN_B, 4));
    expect(routes.decide('spot', 'room-1', SOURCE, 0)).toMatchObject({ route: first });
    expect(routes.decide('spot', 'room-1', again, 0)).toMatchObject({ route: second });
    const replaced = routes.install(KEY, SOURCE, fences(RUN_B, 5));
    expect(routes.size).toBe(2);
    expect(routes.decide('spot', 'room-1', SOURCE, 0)).toMatchObject({ route: replaced });
  });

  it('sweep drops what has expired and keeps the rest', () => {
    const { clock, routes } = table(1000);
    routes.install(KEY, SOURCE, TARGET);
    routes.setDurationMs(3000);
    routes.install({ ...KEY, id: 'room-2' }, SOURCE, TARGET);
    clock.t += 1000;
    expect(routes.sweep()).toBe(1);
    expect(routes.size).toBe(1);
    expect(routes.decide('spot', 'room-2', SOURCE, 0).tag).toBe('relay');
  });

  describe('the messageFollow notice registry', () => {
    const SENDER: NodeRun = { rid: 'caller', nodeGeneration: 'gc1' };

    it('one notice per sender and route: inFlight blocks a second, sent keeps it, a failure lets the next try', () => {
      const { routes } = table();
      const route = routes.install(KEY, SOURCE, TARGET) as NonNullable<ReturnType<FollowRoutes['install']>>;
      expect(routes.claimNotice(route, SENDER)).toBe(true);
      expect(routes.noticeState(route, SENDER)).toBe('inFlight');
      expect(routes.claimNotice(route, SENDER)).toBe(false);
      routes.noticeSent(route, SENDER, false);
      expect(routes.noticeState(route, SENDER)).toBeUndefined();
      expect(routes.claimNotice(route, SENDER)).toBe(true);
      routes.noticeSent(route, SENDER, true);
      expect(routes.noticeState(route, SENDER)).toBe('sent');
      expect(routes.claimNotice(route, SENDER)).toBe(false);
      // Another sender, or another run of the same NodeRid, is told on its own.
      expect(routes.claimNotice(route, { rid: 'other', nodeGeneration: 'go1' })).toBe(true);
      expect(routes.claimNotice(route, { rid: 'caller', nodeGeneration: 'gc2' })).toBe(true);
      // A report for a notice never claimed changes nothing.
      routes.noticeSent(route, { rid: 'nobody', nodeGeneration: 'x' }, true);
      expect(routes.noticeState(route, { rid: 'nobody', nodeGeneration: 'x' })).toBeUndefined();
    });

    it('keys on the route: a second move of the same object has its own registry', () => {
      const { routes } = table();
      const first = routes.install(KEY, SOURCE, TARGET) as NonNullable<ReturnType<FollowRoutes['install']>>;
      routes.noticeSent(first, SENDER, routes.claimNotice(first, SENDER));
      const back = routes.install(KEY, fences(RUN_A, 3), fences(RUN_B, 4));
      expect(routes.claimNotice(back as NonNullable<typeof back>, SENDER)).toBe(true);
      // The same route installed again (a new target) starts over as well.
      const replaced = routes.install(KEY, SOURCE, fences(RUN_B, 5));
      expect(routes.claimNotice(replaced as NonNullable<typeof replaced>, SENDER)).toBe(true);
    });

    it('goes with its route when the route expires: no timer of its own', () => {
      const { clock, routes } = table(1000);
      const route = routes.install(KEY, SOURCE, TARGET) as NonNullable<ReturnType<FollowRoutes['install']>>;
      routes.noticeSent(route, SENDER, routes.claimNotice(route, SENDER));
      clock.t += 1000;
      expect(routes.decide('spot', 'room-1', SOURCE, 0)).toMatchObject({ reason: 'followExpired' });
      const again = routes.install(KEY, SOURCE, TARGET) as NonNullable<ReturnType<FollowRoutes['install']>>;
      expect(routes.noticeState(again, SENDER)).toBeUndefined();
      expect(routes.claimNotice(again, SENDER)).toBe(true);
    });
  });
});
