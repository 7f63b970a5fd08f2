import { afterEach, describe, expect, it, jest } from '@jest/globals';
import {
  type ActorRef,
  type SessionCloseReason,
  type SessionLink,
  ZLinkError,
  decodePayload,
  encodePayload,
} from '../../../../lib/core/index.js';
import type { ObjectSubmission } from '../../../../lib/spot/caller/index.js';
import type { Activation, InboundObjectCall } from '../../../../lib/spot/owner/index.js';
import { ObjectSessions } from '../../../../lib/spot/owner/activation-sessions.js';
import {
  type BindingRoute,
  type HeldRelay,
  SessionBindings,
  bindingRouteOf,
} from '../../../../lib/spot/session/session-bindings.js';
import { OwnedSession } from '../../../../lib/spot/session/owned-session.js';
import type { SessionObjects } from '../../../../lib/spot/session/index.js';
import type { SessionRunner } from '../../../../lib/spot/session/session-runner.js';
import {
  SESSION_BIND_PACKET,
  SESSION_CLOSED_PACKET,
  SESSION_UNBIND_PACKET,
  bindPayload,
  endPayload,
  sessionTurns,
} from '../../../../lib/spot/session/session-turns.js';
import { MESH, RUN_A, RUN_B } from '../fixtures.js';

/**
 * The rules a session keeps (docs/sessions.md): binding generations (a late bind's answer never
 * wins, a late tombstone never removes its successor), the lost and sealed states of a binding, the
 * bound Actor's session turns, and a session's frames taking one turn at a time, in arrival order.
 */

/** A bind's answer as an owner gives it: [type, rid, nodeGeneration, AOG, OLG, objectGeneration]. */
const answerOn = (rid: string, objectGeneration = 1): unknown[] => [
  'Player',
  rid,
  `${rid}-g`,
  2,
  5,
  objectGeneration,
];

const route = (actorId: string, bindingGeneration: number, rid = 'node-a'): BindingRoute =>
  bindingRouteOf(MESH, actorId, bindingGeneration, answerOn(rid));

/** A relay held by a seal, settled into `log`. */
function heldRelay(log: string[], name: string): HeldRelay {
  return {
    sub: { packet: name } as ObjectSubmission,
    sink: {
      resolve: () => log.push(`${name} ok`),
      reject: (e) => log.push(`${name} ${(e as ZLinkError).code}: ${(e as Error).message}`),
    },
  };
}

describe("a session's bindings", () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('reads a bind answer into the stored route, and refuses one that is no route', () => {
    const b = route('p1', 4, 'node-b');
    expect(b).toMatchObject({ actorId: 'p1', type: 'Player', objectGeneration: 1, bindingGeneration: 4 });
    expect(b.route).toMatchObject({
      tag: 'ReadyRoute',
      key: { mesh: MESH, kind: 'actor', id: 'p1' },
      owner: { rid: 'node-b', nodeGeneration: 'node-b-g' },
      authorityOwnerGeneration: 2,
      ownerLeaseGeneration: 5,
      admissionDeadline: Number.POSITIVE_INFINITY,
    });
    for (const bad of [null, 'node-a', ['Player', 'node-a', 'g', -1, 5, 1], ['Player', 'node-a', 'g', 2, 5]])
      expect(() => bindingRouteOf(MESH, 'p1', 1, bad)).toThrow(
        expect.objectContaining({ code: 'ProtocolError' }) as unknown as Error,
      );
  });

  it("generations grow; a bind's late answer never replaces a later bind of the same Actor", () => {
    const bindings = new SessionBindings();
    const first = bindings.nextGeneration();
    const second = bindings.nextGeneration();
    expect(second).toBeGreaterThan(first);
    expect(bindings.set(route('p1', second, 'node-b'))).toBe(true);
    expect(bindings.set(route('p1', first, 'node-a'))).toBe(false);
    expect(bindings.get('p1')?.route.owner.rid).toBe('node-b');
    expect(bindings.set(route('p1', second + 1, 'node-c'))).toBe(true);
    expect(bindings.get('p1')?.route.owner.rid).toBe('node-c');
  });

  it('the first Actor bound is the primary, and a rebind keeps it so', () => {
    const bindings = new SessionBindings();
    bindings.set(route('p1', 1));
    bindings.set(route('p2', 2));
    bindings.set(route('p1', 3, 'node-b'));
    expect(bindings.primary?.actorId).toBe('p1');
    expect(bindings.all().map((b) => b.actorId)).toEqual(['p1', 'p2']);
    bindings.delete('p1');
    expect(bindings.primary?.actorId).toBe('p2');
    expect(bindings.size).toBe(1);
  });

  it('a binding is lost once, only in the generation named; it stays, saying why, and what it held is refused', () => {
    const bindings = new SessionBindings();
    const log: string[] = [];
    bindings.set(route('p1', 2));
    bindings.seal('p1', 'move-1', 60_000, () => undefined);
    bindings.held('p1')?.push(heldRelay(log, 'r1'));
    const ended = { reason: 'bindingEnded' as const, detail: 'destroyed' };
    expect(bindings.lose('p1', ended, 1)).toBe(false);
    expect(bindings.get('p1')?.lost).toBeUndefined();
    expect(bindings.lose('p1', ended, 2)).toBe(true);
    expect(bindings.lose('p1', { reason: 'ownerLost', detail: 'gone' })).toBe(false);
    expect(bindings.get('p1')?.lost).toEqual(ended);
    expect(log).toEqual(["r1 Unavailable: actor 'p1': destroyed"]);
    expect(bindings.held('p1')).toBeUndefined();
  });

  it('a seal holds relays in order until the move routes it; the same move again changes nothing', () => {
    const bindings = new SessionBindings();
    const log: string[] = [];
    bindings.set(route('p1', 1));
    bindings.seal('p1', 'move-1', 60_000, () => undefined);
    bindings.held('p1')?.push(heldRelay(log, 'r1'), heldRelay(log, 'r2'));
    bindings.seal('p1', 'move-1', 60_000, () => undefined);
    expect(bindings.sealedBy('p1', 'move-1')).toBe(true);
    expect(bindings.unseal('p1').map((h) => h.sub.packet)).toEqual(['r1', 'r2']);
    expect(bindings.held('p1')).toBeUndefined();
    expect(bindings.unseal('p1')).toEqual([]);
    expect(log).toEqual([]);
  });

  it('a second move seals anew and refuses what the first held; a seal that is never routed times out', () => {
    jest.useFakeTimers();
    const bindings = new SessionBindings();
    const log: string[] = [];
    let timedOut = 0;
    bindings.seal('p1', 'move-1', 1000, () => timedOut++);
    bindings.held('p1')?.push(heldRelay(log, 'r1'));
    bindings.seal('p1', 'move-2', 1000, () => timedOut++);
    expect(log).toEqual(["r1 Unavailable: actor 'p1' moved again"]);
    expect(bindings.sealedBy('p1', 'move-2')).toBe(true);
    jest.advanceTimersByTime(999);
    expect(timedOut).toBe(0);
    jest.advanceTimersByTime(1);
    expect(timedOut).toBe(1);
    bindings.unseal('p1');
    bindings.seal('p1', 'move-3', 1000, () => timedOut++);
    bindings.unseal('p1');
    jest.advanceTimersByTime(5000);
    expect(timedOut).toBe(1);
  });
});

const binding = (bindingGeneration: number, ownerRid = 'gateway') => ({
  ownerRid,
  ownerGeneration: `${ownerRid}-g`,
  listener: 'game',
  sessionId: 's.1',
  bindingGeneration,
});

/** An Actor (or a Spot) as a session turn sees it; `onSessionClosed` recorded in `closed`. */
function bound(kind: 'actor' | 'spot' = 'actor'): { a: Activation; closed: string[] } {
  const closed: string[] = [];
  const a = {
    key: { mesh: MESH, kind, id: 'p1' },
    cls: { type: 'Player', hooks: { onSessionClosed: true } },
    authority: { authorityOwnerGeneration: 2, ownerLeaseGeneration: 5, objectGeneration: 9 },
    sessions: kind === 'actor' ? new ObjectSessions('p1', undefined) : undefined,
    scope: {},
    hook: (_name: string, _scope: unknown, session: { id: string }, reason: string) =>
      void closed.push(`${session.id} ${reason}`),
  } as unknown as Activation;
  return { a, closed };
}

const turnsOn = sessionTurns({
  self: RUN_A,
  link: { isReady: () => false } as never,
  pending: undefined as never,
});

async function run(a: Activation, packet: string, payload: Uint8Array): Promise<unknown> {
  const t = turnsOn(a, { packet, payload } as InboundObjectCall);
  if (t === undefined || t instanceof ZLinkError) return t;
  return t();
}

describe("a bound Actor's session turns", () => {
  it('a bind registers the binding and answers with the route the Actor is held on here', async () => {
    const { a } = bound();
    const answer = await run(a, SESSION_BIND_PACKET, bindPayload(binding(1), undefined));
    expect(answer).toEqual(['Player', RUN_A.rid, RUN_A.nodeGeneration, 2, 5, 9]);
    expect(a.sessions?.image()).toEqual([binding(1)]);
    // The answer is what the Session owner stores: read back, it names this run and these fences.
    expect(bindingRouteOf(MESH, 'p1', 1, answer).route.owner).toEqual(RUN_A);
  });

  it('a late tombstone never removes the binding that replaced it; the current generation goes', async () => {
    const { a } = bound();
    await run(a, SESSION_BIND_PACKET, bindPayload(binding(3), RUN_A));
    await run(a, SESSION_UNBIND_PACKET, endPayload('gateway', 's.1', 2));
    expect(a.sessions?.image()).toEqual([binding(3)]);
    await run(a, SESSION_UNBIND_PACKET, endPayload('gateway', 's.1', 3));
    expect(a.sessions?.image()).toEqual([]);
  });

  it("a session's end runs onSessionClosed once, for a binding it removed, with the reason", async () => {
    const { a, closed } = bound();
    await run(a, SESSION_BIND_PACKET, bindPayload(binding(1), undefined));
    await run(a, SESSION_CLOSED_PACKET, endPayload('gateway', 's.1', 1, 'ownerLost'));
    await run(a, SESSION_CLOSED_PACKET, endPayload('gateway', 's.1', 1, 'ownerLost'));
    expect(closed).toEqual(['s.1 ownerLost']);
  });

  it('refuses a Spot (only an Actor is bound) and a malformed payload before it queues; leaves other packets', () => {
    const { a: spot } = bound('spot');
    const wrongKind = turnsOn(spot, {
      packet: SESSION_BIND_PACKET,
      payload: bindPayload(binding(1), undefined),
    } as InboundObjectCall);
    expect(wrongKind).toMatchObject({ code: 'InvalidOperation', details: { reason: 'wrongKind' } });
    const { a } = bound();
    const malformed = turnsOn(a, {
      packet: SESSION_UNBIND_PACKET,
      payload: encodePayload(['x']),
    } as InboundObjectCall);
    expect(malformed).toMatchObject({ code: 'ProtocolError' });
    expect(turnsOn(a, { packet: 'hello', payload: encodePayload(1) } as InboundObjectCall)).toBeUndefined();
  });
});

/** A session link that records what the client was sent. */
function link(): { l: SessionLink; sent: string[] } {
  const sent: string[] = [];
  const l = {
    listener: 'game',
    remoteAddress: { address: '127.0.0.1', port: 40000, family: 'IPv4' as const },
    sessionId: 's.1',
    open: true,
    awaiting: 0,
    welcome: () => undefined,
    reply: (c: number, p: Uint8Array) => (sent.push(`reply ${c} ${JSON.stringify(unpack(p))}`), true),
    error: (c: number, code: string) => (sent.push(`error ${c} ${code}`), true),
    push: () => true,
    close(reason: SessionCloseReason) {
      sent.push(`close ${reason}`);
      (this as { open: boolean }).open = false;
    },
    drop(reason: SessionCloseReason) {
      this.close(reason);
    },
  };
  return { l, sent };
}

function unpack(p: Uint8Array): unknown {
  const d = decodePayload(p);
  return d.ok ? d.value : d.reason;
}

interface Scripted {
  readonly runner: SessionRunner;
  /** Relays submitted, as `actor packet #sequence`. */
  readonly relays: string[];
  /** Binds asked, each settled by the test. */
  readonly binds: { gen: number; answer: (a: unknown) => void }[];
  /** The relays' answers, settled by the test in any order. */
  readonly answers: ((v: unknown) => void)[];
  /** The relays' refusals, as `answers`. */
  readonly rejects: ((e: unknown) => void)[];
}

function runner(): Scripted {
  const relays: string[] = [];
  const binds: Scripted['binds'] = [];
  const answers: Scripted['answers'] = [];
  const rejects: Scripted['rejects'] = [];
  const objects = {
    mesh: MESH,
    self: RUN_B,
    bind: (_ref, b) => new Promise((resolve) => binds.push({ gen: b.bindingGeneration, answer: resolve })),
    callOnRoute: (_route, _sub, sink) => sink.reject(new Error('not here')),
  } as SessionObjects;
  const r: SessionRunner = {
    timeoutMs: 1000,
    handler: () => undefined,
    run: () => Promise.reject(new Error('no handlers here')),
    failed: () => undefined,
    objects: () => objects,
    submit: (_route, sub, sink) => {
      relays.push(`${sub.id} ${sub.packet} #${sub.session?.stamp.sequence}`);
      answers.push((v) => sink.resolve(v));
      rejects.push((e) => sink.reject(e));
    },
    unbound: () => undefined,
    ended: () => undefined,
    endAway: () => undefined,
  };
  return { runner: r, relays, binds, answers, rejects };
}

const actorRef = (id: string): ActorRef =>
  ({ kind: 'actor', type: 'Player', id, objectGeneration: 1, mesh: MESH, rid: 'node-a' }) as ActorRef;

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('a session on its Session owner', () => {
  it('two binds of one Actor: the later wins even when the earlier answer comes last', async () => {
    const s = runner();
    const { l } = link();
    const session = new OwnedSession('s.1', l, s.runner, 8, 1 << 20);
    const first = session.bind(actorRef('p1'));
    const second = session.bind(actorRef('p1'));
    await flush();
    expect(s.binds.map((b) => b.gen)).toEqual([1, 2]);
    s.binds[1]?.answer(answerOn('node-c'));
    await second;
    s.binds[0]?.answer(answerOn('node-a'));
    await first;
    expect(session.bindings.get('p1')).toMatchObject({ bindingGeneration: 2 });
    expect(session.bindings.get('p1')?.route.owner.rid).toBe('node-c');
  });

  it("relays the client's frames to the primary Actor in arrival order, each stamped with the next sequence", async () => {
    const s = runner();
    const { l, sent } = link();
    const session = new OwnedSession('s.1', l, s.runner, 8, 1 << 20);
    session.bindings.set(route('p1', 1));
    session.enqueue('request', 11, 'move', encodePayload('a'));
    session.enqueue('request', 12, 'move', encodePayload('b'));
    session.enqueue('send', 0, 'chat', encodePayload('c'));
    await flush();
    expect(s.relays).toEqual(['p1 move #1', 'p1 move #2', 'p1 chat #3']);
    // Answers come back out of order: each goes to its own request, its bytes as they came.
    s.answers[1]?.(encodePayload('second'));
    s.answers[0]?.(encodePayload('first'));
    await flush();
    expect(sent).toEqual(['reply 12 "second"', 'reply 11 "first"']);
  });

  it('a frame with no handler and no Actor bound is answered noHandler; one more frame than maxInFlight closes the session', async () => {
    const s = runner();
    const { l, sent } = link();
    const session = new OwnedSession('s.1', l, s.runner, 2, 1 << 20);
    session.enqueue('request', 1, 'hello', encodePayload(null));
    await flush();
    expect(sent).toEqual([expect.stringMatching(/^error 1 /)]);
    sent.length = 0;
    // A handler that never ends: the first frame holds the turn, the next ones wait.
    const never = { ...s.runner, handler: () => () => null, run: () => new Promise<never>(() => undefined) };
    const blocked = new OwnedSession('s.2', l, never, 2, 1 << 20);
    for (const c of [1, 2, 3]) blocked.enqueue('request', c, 'slow', encodePayload(null));
    expect(sent).toEqual([]);
    blocked.enqueue('request', 4, 'slow', encodePayload(null));
    expect(sent).toEqual(['close tooManyInFlight']);
  });

  it('a relay on a lost binding ends Unavailable with the reason, without reaching the Actor', async () => {
    const s = runner();
    const { l } = link();
    const session = new OwnedSession('s.1', l, s.runner, 8, 1 << 20);
    session.bindings.set(route('p1', 1));
    session.bindings.lose('p1', { reason: 'ownerLost', detail: "owner 'node-a' left" });
    await expect(session.relay('move', 'x')).rejects.toMatchObject({
      code: 'Unavailable',
      details: { reason: 'ownerLost' },
    });
    expect(s.relays).toEqual([]);
  });

  it('relays for a sealed binding wait, in session order, and go when the seal ends', async () => {
    const s = runner();
    const { l } = link();
    const session = new OwnedSession('s.1', l, s.runner, 8, 1 << 20);
    session.bindings.set(route('p1', 1));
    session.bindings.seal('p1', 'move-1', 60_000, () => undefined);
    void session.relay('a', 1);
    void session.relay('b', 2);
    await flush();
    expect(s.relays).toEqual([]);
    const held = session.bindings.held('p1')?.map((h) => `${h.sub.packet} #${h.sub.session?.stamp.sequence}`);
    expect(held).toEqual(['a #1', 'b #2']);
    session.bindings.unseal('p1');
  });

  it('sends go on while fewer than maxInFlight are on their way; the next frame waits for the one that filled it', async () => {
    const s = runner();
    const { l } = link();
    const session = new OwnedSession('s.1', l, s.runner, 2, 1 << 20);
    session.bindings.set(route('p1', 1));
    for (const packet of ['a', 'b', 'c', 'd']) session.enqueue('send', 0, packet, encodePayload(null));
    // `b` makes two on their way: `c` and `d` wait in the queue.
    expect(s.relays).toEqual(['p1 a #1', 'p1 b #2']);
    s.answers[0]?.(undefined);
    await flush();
    expect(s.relays).toEqual(['p1 a #1', 'p1 b #2']);
    s.answers[1]?.(undefined);
    await flush();
    expect(s.relays).toEqual(['p1 a #1', 'p1 b #2', 'p1 c #3', 'p1 d #4']);
  });

  it("a relay refused because its Actor's incarnation ended loses the binding once; later frames end at once", async () => {
    const s = runner();
    const unbound: string[] = [];
    s.runner.unbound = (_session, reason) => void unbound.push(reason);
    const { l, sent } = link();
    const session = new OwnedSession('s.1', l, s.runner, 8, 1 << 20);
    session.bindings.set(route('p1', 1));
    session.enqueue('request', 1, 'move', encodePayload('a'));
    session.enqueue('request', 2, 'move', encodePayload('b'));
    const ended = new ZLinkError('Unavailable', 'destroyed', { details: { reason: 'bindingEnded' } });
    s.rejects[0]?.(ended);
    s.rejects[1]?.(ended);
    session.enqueue('request', 3, 'move', encodePayload('c'));
    await flush();
    expect(unbound).toEqual(['bindingEnded']);
    expect(s.relays).toEqual(['p1 move #1', 'p1 move #2']);
    expect(sent).toEqual(['error 1 Unavailable', 'error 2 Unavailable', 'error 3 Unavailable']);
  });
});
