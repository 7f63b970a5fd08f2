/**
 * Logical Multicast between real processes (issue 31): object servers with Spots subscribed to a mix
 * of topics, a client publishing with `ZLinkSpotPublisher` and a Spot publishing from its handler.
 * Every subscribed Spot gets exactly the events of its topics, once each and in each publisher's
 * order — read from each Spot's own log — and each publish costs one record per node with subscribers
 * (the publishers' counters against the receivers'); a node with no subscribed Spot gets no record.
 * At scale: 1,000 Spots and 10,000 events. Under moves: Spots relocated back and forth while events
 * flow still get every event once, in order. And a subscribing node killed mid-stream costs the other
 * nodes' Spots nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp } from '../helpers/child-app.js';
import type { SpotDigest, StreamDigest } from '../fixtures/e2e/multicast-node.app.js';
import { ObjectCluster, ask } from './object-nodes.js';

const APP = 'e2e/multicast-node.app.js';
/** The fixture's `zone-<k>` classes (ZONES there). */
const ZONES = 20;

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

/**
 * Polls the Spots' own digests until `view` of each equals `expected(id)` (or `ms` passed), then
 * asserts it Spot by Spot, so a failure names the Spot and shows what it saw.
 */
async function expectDigests<T>(
  app: ChildApp,
  ids: string[],
  view: (d: SpotDigest) => T,
  expected: (id: string) => T,
  ms = 30000,
): Promise<void> {
  const deadline = Date.now() + ms;
  const same = (d: SpotDigest) => JSON.stringify(view(d)) === JSON.stringify(expected(d.id));
  let last = await digests(app, ids);
  while (!last.every(same) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    last = await digests(app, ids);
  }
  for (const d of last) expect({ id: d.id, view: view(d) }).toEqual({ id: d.id, view: expected(d.id) });
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
  // Lobbies take both topics, arenas one, quiet ones none (all of s3's).
  const lobbies = Array.from({ length: 30 }, (_, i) => `lobby-${i}`);
  const arenas = Array.from({ length: 15 }, (_, i) => `arena-${i}`);
  const quiets = Array.from({ length: 5 }, (_, i) => `quiet-${i}`);
  // Events from three publishers: the client on each topic, arena-0 from its handler.
  const [M, W, A] = [500, 500, 300];

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-multicast', APP);
    [s1, s2, s3, client] = await Promise.all([
      cluster.node('s1', 'server'),
      cluster.node('s2', 'server', { types: ['lobby', 'arena', 'zones'] }),
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
      ask<{ outcomes: object }>(client, { type: 'publish', topic: 'milestone', stream: 'c-m', count: M }),
      ask<{ outcomes: object }>(client, { type: 'publish', topic: 'weather', stream: 'c-w', count: W }),
      ask<{ sent: unknown }>(client, {
        type: 'fire',
        spot: 'arena-0',
        topic: 'weather',
        stream: 'a-w',
        count: A,
      }),
    ]);
    expect(fromClientM.outcomes).toEqual({ ok: M });
    expect(fromClientW.outcomes).toEqual({ ok: W });
    expect(fromArena.sent).toBe(A);

    const ids = [...lobbies, ...arenas, ...quiets];
    const expected = (id: string): SpotDigest['topics'] => {
      if (id.startsWith('quiet')) return {};
      const milestone = { 'c1/-/c-m': whole(M) };
      if (id.startsWith('arena')) return { milestone };
      return { milestone, weather: { 'c1/-/c-w': whole(W), 's1/arena-0/a-w': whole(A) } };
    };
    await expectDigests(
      client,
      ids,
      (d) => sortTopics(d.topics),
      (id) => sortTopics(expected(id)),
    );

    // One record per publish per node with subscribers (s1 and s2), none to s3 or to the client.
    const [c, m1, m2, m3] = await Promise.all([counters(client), counters(s1), counters(s2), counters(s3)]);
    expect(c.get('milestone')).toMatchObject({ published: M, records: 2 * M, received: 0 });
    expect(c.get('weather')).toMatchObject({ published: W, records: 2 * W, received: 0 });
    expect(m1.get('milestone')).toMatchObject({ received: M, dropped: 0, refused: {} });
    expect(m2.get('milestone')).toMatchObject({ received: M, dropped: 0, refused: {} });
    // arena-0 lives on s1: its events go to s2 by record and to s1's lobbies without one.
    expect(m1.get('weather')).toMatchObject({ published: A, records: A, received: W, dropped: 0 });
    expect(m2.get('weather')).toMatchObject({ received: W + A, dropped: 0 });
    expect(m3.size).toBe(0);
    // Deliveries counted by the receivers match the Spots' own logs: 15 lobbies and 7 or 8 arenas each.
    const lobbiesOn = (n: number) => lobbies.filter((_, i) => i % 2 === n).length;
    const arenasOn = (n: number) => arenas.filter((_, i) => i % 2 === n).length;
    expect(m1.get('milestone')?.handled).toBe(M * (lobbiesOn(0) + arenasOn(0)));
    expect(m2.get('milestone')?.handled).toBe(M * (lobbiesOn(1) + arenasOn(1)));
    expect(m1.get('weather')?.handled).toBe((W + A) * lobbiesOn(0));
    expect(m2.get('weather')?.handled).toBe((W + A) * lobbiesOn(1));
  }, 90000);

  it('1,000 Spots in twenty audiences, 10,000 events from outside and from a Spot: each Spot gets its own topic’s, whole', async () => {
    const zones = Array.from({ length: ZONES }, (_, k) => Array.from({ length: 50 }, (_, i) => `z${k}-${i}`));
    const spots = zones.flatMap((ids, k) =>
      ids.map((id, i) => ({ id, type: `zone-${k}`, node: i % 2 === 0 ? 's1' : 's2' })),
    );
    expect((await ask<{ failed: object }>(client, { type: 'create', spots }, 120000)).failed).toEqual({});
    const topics = zones.map((_, k) => `z${k}`);
    // 400 events on each topic from the client (8,000), 100 on each from Spot z0-0 (2,000).
    const [published, fired] = await Promise.all([
      Promise.all(
        topics.map((topic) =>
          ask<{ outcomes: object }>(client, { type: 'publish', topic, stream: 'zc', count: 400 }, 120000),
        ),
      ),
      ask<{ sent: unknown }>(
        client,
        { type: 'fire', spot: 'z0-0', topics, stream: 'zf', count: 100 },
        120000,
      ),
    ]);
    for (const p of published) expect(p.outcomes).toEqual({ ok: 400 });
    expect(fired.sent).toBe(2000);
    const ids = zones.flat();
    const expected = (id: string): SpotDigest['topics'] => ({
      [`z${id.slice(1, id.indexOf('-'))}`]: { 'c1/-/zc': whole(400), 's1/z0-0/zf': whole(100) },
    });
    await expectDigests(
      client,
      ids,
      (d) => sortTopics(d.topics),
      (id) => sortTopics(expected(id)),
      60000,
    );
    // One record per publish per node with subscribers: the client's 8,000 went to s1 and s2, s3 got none.
    const after = await counters(client);
    for (const topic of topics) expect(after.get(topic)).toMatchObject({ published: 400, records: 800 });
    expect((await counters(s3)).size).toBe(0);
  }, 240000);

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
    await expectDigests(client, ids, streamsOf, wanted);
  }, 180000);

  it('a subscribing node killed mid-stream: publishes go on ending ok, and every other node’s Spots get every event', async () => {
    // Placed on s1 (the even ones), and back there after an even number of moves each.
    const even = (_: string, i: number) => i % 2 === 0;
    const onS1 = [...lobbies.filter(even), ...arenas.filter(even)];
    const publishing = ask<{ outcomes: object }>(client, {
      type: 'publish',
      topic: 'milestone',
      stream: 'kill-m',
      count: 2000,
      spacingMs: 1,
    });
    await new Promise((r) => setTimeout(r, 300));
    s2.kill('SIGKILL');
    expect((await publishing).outcomes).toEqual({ ok: 2000 });
    const streamOf = (d: SpotDigest) => d.topics.milestone?.['c1/-/kill-m'];
    await expectDigests(client, onS1, streamOf, () => whole(2000));
  }, 120000);
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
