/**
 * Logical Multicast between real processes (issue 31): object servers with Spots subscribed to a mix
 * of topics, a client publishing with `ZLinkSpotPublisher` and a Spot publishing from its handler.
 * Every subscribed Spot gets exactly the events of its topics, once each and in each publisher's
 * order — read from each Spot's own log — and each publish costs one record per node with subscribers
 * (the publishers' counters against the receivers'); a node with no subscribed Spot gets no record.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp } from '../helpers/child-app.js';
import type { SpotDigest, StreamDigest } from '../fixtures/e2e/multicast-node.app.js';
import { ObjectCluster, ask } from './object-nodes.js';

const APP = 'e2e/multicast-node.app.js';

interface TopicCounters {
  channel: string;
  topic: string;
  published: number;
  records: number;
  received: number;
  delivered: number;
  handled: number;
  dropped: number;
  refused: Record<string, number>;
}

async function digests(app: ChildApp, ids: string[]): Promise<SpotDigest[]> {
  return (await ask<{ digests: SpotDigest[] }>(app, { type: 'digest', ids })).digests;
}

async function counters(app: ChildApp): Promise<Map<string, TopicCounters>> {
  const m = await ask<{ multicast: TopicCounters[] }>(app, { type: 'metrics' });
  return new Map(m.multicast.map((t) => [t.topic, t]));
}

/** A whole stream of `count` events, numbered 0 .. count - 1, each once and in order. */
const whole = (count: number): StreamDigest => ({
  count,
  inOrder: true,
  distinct: count,
  first: 0,
  last: count - 1,
});

describe('Logical Multicast across processes', () => {
  let cluster: ObjectCluster;
  let s1: ChildApp;
  let s2: ChildApp;
  let s3: ChildApp;
  let client: ChildApp;
  const lobbies = Array.from({ length: 30 }, (_, i) => `lobby-${i}`);
  const arenas = Array.from({ length: 15 }, (_, i) => `arena-${i}`);
  const quiets = Array.from({ length: 5 }, (_, i) => `quiet-${i}`);

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-multicast', APP);
    [s1, s2, s3, client] = await Promise.all([
      cluster.node('s1', 'server'),
      cluster.node('s2', 'server', { types: ['lobby', 'arena'] }),
      cluster.node('s3', 'server', { types: ['quiet'] }),
      cluster.node('c1', 'client'),
    ]);
    for (const app of cluster.apps) await ask(app, { type: 'waitPeers', count: 3 });
    const spots = [
      ...lobbies.map((id, i) => ({ id, type: 'lobby', node: i % 2 === 0 ? 's1' : 's2' })),
      ...arenas.map((id, i) => ({ id, type: 'arena', node: i % 2 === 0 ? 's1' : 's2' })),
      ...quiets.map((id) => ({ id, type: 'quiet', node: 's3' })),
    ];
    // A server advertises a pair as its first Spot of it enters its table, before that creation's
    // answer leaves on the same link: once the creations are answered, the client knows every pair.
    expect((await ask<{ failed: object }>(client, { type: 'create', spots })).failed).toEqual({});
  }, 90000);

  afterAll(async () => {
    await cluster?.close();
  });

  it('every subscribed Spot gets exactly its topics’ events, once and in each publisher’s order; one record per subscribing node', async () => {
    const [fromClientM, fromClientW, fromArena] = await Promise.all([
      ask<{ outcomes: object }>(client, { type: 'publish', topic: 'milestone', stream: 'c-m', count: 500 }),
      ask<{ outcomes: object }>(client, { type: 'publish', topic: 'weather', stream: 'c-w', count: 500 }),
      ask<{ sent: unknown }>(client, {
        type: 'fire',
        spot: 'arena-0',
        topic: 'weather',
        stream: 'a-w',
        count: 300,
      }),
    ]);
    expect(fromClientM.outcomes).toEqual({ ok: 500 });
    expect(fromClientW.outcomes).toEqual({ ok: 500 });
    expect(fromArena.sent).toBe(300);

    const ids = [...lobbies, ...arenas, ...quiets];
    const expected = (id: string): SpotDigest['topics'] => {
      if (id.startsWith('quiet')) return {};
      const milestone = { 'c1/-/c-m': whole(500) };
      if (id.startsWith('arena')) return { milestone };
      return { milestone, weather: { 'c1/-/c-w': whole(500), 's1/arena-0/a-w': whole(300) } };
    };
    let last: SpotDigest[] = [];
    const complete = async (): Promise<boolean> => {
      last = await digests(client, ids);
      return last.every((d) => JSON.stringify(d.topics) === JSON.stringify(sortTopics(expected(d.id))));
    };
    const deadline = Date.now() + 30000;
    while (!(await complete()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    for (const d of last)
      expect({ id: d.id, topics: sortTopics(d.topics) }).toEqual({
        id: d.id,
        topics: sortTopics(expected(d.id)),
      });

    // One record per publish per node with subscribers (s1 and s2), none to s3 or to the client.
    const [c, m1, m2, m3] = await Promise.all([counters(client), counters(s1), counters(s2), counters(s3)]);
    expect(c.get('milestone')).toMatchObject({ published: 500, records: 1000, received: 0 });
    expect(c.get('weather')).toMatchObject({ published: 500, records: 1000, received: 0 });
    expect(m1.get('milestone')).toMatchObject({ received: 500, dropped: 0, refused: {} });
    expect(m2.get('milestone')).toMatchObject({ received: 500, dropped: 0, refused: {} });
    // arena-0 lives on s1: its 300 go to s2 by record and to s1's lobbies without one.
    expect(m1.get('weather')).toMatchObject({ published: 300, records: 300, received: 500, dropped: 0 });
    expect(m2.get('weather')).toMatchObject({ received: 800, dropped: 0 });
    expect(m3.size).toBe(0);
    // Deliveries counted by the receivers match the Spots' own logs: 15 lobbies and 7 or 8 arenas each.
    const lobbiesOn = (n: number) => lobbies.filter((_, i) => i % 2 === n).length;
    const arenasOn = (n: number) => arenas.filter((_, i) => i % 2 === n).length;
    expect(m1.get('milestone')?.handled).toBe(500 * (lobbiesOn(0) + arenasOn(0)));
    expect(m2.get('milestone')?.handled).toBe(500 * (lobbiesOn(1) + arenasOn(1)));
    expect(m1.get('weather')?.handled).toBe(800 * lobbiesOn(0));
    expect(m2.get('weather')?.handled).toBe(800 * lobbiesOn(1));
  }, 90000);

  it('Spots moving back and forth while events flow still get every event once, in order', async () => {
    const moving = [...lobbies.slice(0, 4), ...arenas.slice(2, 4)];
    const [relocated, m, w] = await Promise.all([
      ask<{ outcomes: Record<string, number> }>(client, { type: 'relocate', ids: moving, rounds: 4 }, 120000),
      ask<{ outcomes: object }>(client, {
        type: 'publish',
        topic: 'milestone',
        stream: 'moving-m',
        count: 1500,
        spacingMs: 1,
      }),
      ask<{ outcomes: object }>(client, {
        type: 'publish',
        topic: 'weather',
        stream: 'moving-w',
        count: 1500,
        spacingMs: 1,
      }),
    ]);
    expect(relocated.outcomes).toEqual({ committed: moving.length * 4 });
    expect(m.outcomes).toEqual({ ok: 1500 });
    expect(w.outcomes).toEqual({ ok: 1500 });
    const ids = [...lobbies, ...arenas];
    const wanted = (id: string): Record<string, StreamDigest> =>
      id.startsWith('arena')
        ? { 'milestone c1/-/moving-m': whole(1500) }
        : { 'milestone c1/-/moving-m': whole(1500), 'weather c1/-/moving-w': whole(1500) };
    const streamsOf = (d: SpotDigest): Record<string, StreamDigest> =>
      Object.fromEntries(
        Object.entries(d.topics).flatMap(([topic, streams]) =>
          Object.entries(streams)
            .filter(([key]) => key.includes('moving'))
            .map(([key, digest]) => [`${topic} ${key}`, digest]),
        ),
      );
    let last: SpotDigest[];
    const deadline = Date.now() + 30000;
    for (;;) {
      last = await digests(client, ids);
      const done = last.every((d) => JSON.stringify(streamsOf(d)) === JSON.stringify(wanted(d.id)));
      if (done || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const d of last)
      expect({ id: d.id, streams: streamsOf(d) }).toEqual({ id: d.id, streams: wanted(d.id) });
  }, 180000);
});

/** Topics and streams in key order, so two digests compare whatever order they were filled in. */
function sortTopics(topics: SpotDigest['topics']): SpotDigest['topics'] {
  return Object.fromEntries(
    Object.keys(topics)
      .sort()
      .map((t) => [
        t,
        Object.fromEntries(
          Object.keys(topics[t] as object)
            .sort()
            .map((k) => [k, (topics[t] as Record<string, StreamDigest>)[k] as StreamDigest]),
        ),
      ]),
  );
}
