/**
 * The Logical Multicast rules that need no socket: the SpotEvent record, the topic checks shared by
 * `@SpotSubscribe` and a publish, a class's subscriptions at registration, and the two indexes — the
 * Spots of this node per pair (and what it advertises), the peers per pair (what a publish reads).
 */
import { describe, expect, it } from '@jest/globals';
import {
  type MeshPeerEvent,
  type MulticastTopic,
  ObjectClassRegistry,
  type ObjectPeer,
  RecordKind,
  decodeFrame,
  encodePayload,
  lifecycleHooksOf,
  packr,
  publishTopic,
  topicProblem,
} from '../../../../lib/core/index.js';
import { decodeObjectRecord, encodeSpotEvent } from '../../../../lib/spot/wire/index.js';
import { LocalTopics } from '../../../../lib/spot/multicast/local-topics.js';
import { PeerTopics } from '../../../../lib/spot/multicast/peer-topics.js';
import type { Activation } from '../../../../lib/spot/owner/activation.js';
import { FakeLink } from '../fixtures.js';

const spotClass = (subscriptions: { channel: string; topic: string; method: string }[], kind = 'spot') => ({
  kind: kind as 'spot',
  type: 'lobby',
  token: class Lobby {},
  source: 'Lobby',
  options: {},
  handlers: [],
  subscriptions: subscriptions.map((s) => ({ ...s, source: `Lobby.${s.method}` })),
  hooks: lifecycleHooksOf({}),
});

describe('the SpotEvent record', () => {
  it('round-trips, with and without its publishing object', () => {
    const payload = encodePayload({ n: 1 });
    for (const from of [undefined, { kind: 'spot' as const, id: 'room-7' }]) {
      const bytes = encodeSpotEvent('news', 'milestone', 'won', 42, from, payload);
      expect(decodeObjectRecord(bytes)).toEqual({
        kind: RecordKind.SpotEvent,
        channel: 'news',
        topic: 'milestone',
        packet: 'won',
        seq: 42,
        from,
        payload,
      });
    }
  });

  it('ignores fields a later version appends; refuses one short or mistyped', () => {
    const fields = packr.unpack(
      encodeSpotEvent('news', 't', 'p', 1, undefined, encodePayload(1)),
    ) as unknown[];
    expect(decodeObjectRecord(packr.pack([...fields, 'later']))).toMatchObject({ seq: 1 });
    expect(decodeObjectRecord(packr.pack(fields.slice(0, 7)))).toBe('malformed spot event record');
    const with_ = (i: number, v: unknown) => packr.pack(fields.map((f, j) => (j === i ? v : f)));
    expect(decodeObjectRecord(with_(5, 1.5))).toBe('malformed spot event record');
    expect(decodeObjectRecord(with_(3, ''))).toBe('malformed spot event record');
    expect(decodeObjectRecord(with_(6, ['spot']))).toBe('malformed spot event record: its publisher');
  });

  it('is an object kind: a node without an object layer drops it as reserved', () => {
    const frame = encodeSpotEvent('news', 't', 'p', 1, undefined, encodePayload(1));
    expect(decodeFrame(frame).malformed[0]?.reason).toContain('(SpotEvent) is reserved');
  });
});

describe('topics', () => {
  it('the runtime keeps the liveness topic and its zlink: prefix; a topic is a non-empty string', () => {
    expect(topicProblem('milestone')).toBeUndefined();
    expect(topicProblem('')).toBe('must be a non-empty string');
    expect(topicProblem(7)).toBe('must be a non-empty string');
    expect(topicProblem('\u0001ZLF1')).toContain('liveness');
    expect(topicProblem('zlink:x')).toContain("'zlink:'");
  });

  it('a publish goes on its topic, else its packet; a bad name is InvalidArgument naming it', () => {
    expect(publishTopic('news', 'won')).toBe('won');
    expect(publishTopic('news', 'won', { topic: 'milestone' })).toBe('milestone');
    expect(() => publishTopic('news', 'zlink:flush')).toThrow(
      expect.objectContaining({ details: { argument: 'topic' } }),
    );
    expect(() => publishTopic('', 'won')).toThrow(
      expect.objectContaining({ details: { argument: 'channel' } }),
    );
  });

  it('registration refuses a reserved topic, an empty channel, one pair twice and an Actor that subscribes', () => {
    const register = (c: ReturnType<typeof spotClass>) => () => new ObjectClassRegistry().register(c);
    expect(register(spotClass([{ channel: 'news', topic: 'zlink:x', method: 'a' }]))).toThrow(
      /Configuration|zlink:/,
    );
    expect(register(spotClass([{ channel: '', topic: 't', method: 'a' }]))).toThrow(/channel must be/);
    expect(
      register(
        spotClass([
          { channel: 'news', topic: 't', method: 'a' },
          { channel: 'news', topic: 't', method: 'b' },
        ]),
      ),
    ).toThrow(/subscribed twice: Lobby.a and Lobby.b/);
    expect(register(spotClass([{ channel: 'news', topic: 't', method: 'a' }], 'actor'))).toThrow(
      /only Spots/,
    );
    const ok = new ObjectClassRegistry();
    ok.register(spotClass([{ channel: 'news', topic: 't', method: 'a' }]));
    expect(ok.subscriptionsOf('spot', 'lobby')?.get('news')?.get('t')?.method).toBe('a');
    expect(ok.subscriptionsOf('spot', 'other')).toBeUndefined();
  });
});

/** An activation as the index reads it: only its subscriptions. */
function spot(id: string, pairs: [string, string][]): Activation {
  const table = new Map<string, Map<string, { method: string }>>();
  for (const [channel, topic] of pairs) {
    if (!table.has(channel)) table.set(channel, new Map());
    table.get(channel)?.set(topic, { method: topic });
  }
  return { key: { kind: 'spot', id }, subscriptions: table } as unknown as Activation;
}

const flush = () => new Promise((r) => setImmediate(r));

describe('LocalTopics', () => {
  it('advertises a pair when its first Spot comes and withdraws it when the last goes, once per turn', async () => {
    const link = new FakeLink();
    const local = new LocalTopics(link);
    const a = spot('a', [
      ['news', 'm'],
      ['news', 'w'],
    ]);
    const b = spot('b', [['news', 'm']]);
    local.added(a);
    local.added(b);
    await flush();
    expect(link.advertised).toEqual([
      [
        { channel: 'news', topic: 'm' },
        { channel: 'news', topic: 'w' },
      ],
    ]);
    expect([...(local.subscribers('news', 'm') ?? [])]).toEqual([a, b]);
    local.removed(a);
    await flush();
    expect(link.advertised[1]).toEqual([{ channel: 'news', topic: 'm' }]);
    local.removed(b);
    local.added(spot('c', []));
    await flush();
    expect(link.advertised[2]).toEqual([]);
    expect(local.subscribers('news', 'm')).toBeUndefined();
    expect(link.advertised).toHaveLength(3);
  });
});

describe('PeerTopics', () => {
  const peer = (rid: string, topics: MulticastTopic[], generation = 'g1'): ObjectPeer => ({
    rid,
    generation,
    objectRole: 'server',
    objectTypes: [],
    topics,
  });

  it('follows ups, changes and downs; a list in hand is never changed under it', () => {
    const link = new FakeLink();
    const listeners: ((e: MeshPeerEvent) => void)[] = [];
    link.onPeer = (l) => {
      listeners.push(l);
      return () => undefined;
    };
    const peers = new PeerTopics(link);
    const tell = (e: MeshPeerEvent) => listeners.forEach((l) => l(e));
    tell({ type: 'up', peer: peer('b', [{ channel: 'news', topic: 'm' }]) });
    tell({
      type: 'up',
      peer: peer('c', [
        { channel: 'news', topic: 'm' },
        { channel: 'news', topic: 'w' },
      ]),
    });
    const held = peers.nodes('news', 'm');
    expect(held.map((p) => p.rid)).toEqual(['b', 'c']);
    tell({ type: 'changed', peer: peer('c', [{ channel: 'news', topic: 'w' }]) });
    expect(peers.nodes('news', 'm').map((p) => p.rid)).toEqual(['b']);
    expect(held.map((p) => p.rid)).toEqual(['b', 'c']);
    tell({ type: 'down', peer: { rid: 'b', generation: 'g1' }, reason: 'gone' });
    expect(peers.nodes('news', 'm')).toEqual([]);
    expect(peers.nodes('news', 'w')).toEqual([{ rid: 'c', generation: 'g1' }]);
    expect(peers.nodes('other', 'x')).toEqual([]);
  });
});
