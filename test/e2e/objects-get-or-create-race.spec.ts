/**
 * Eight object-server processes get-or-create one Spot id at the same instant, 50 rounds, a new id
 * each round (issue 16 item 10). Every process places the Spot on itself (it hosts the type), so all
 * eight race for the authority record in a real redis-server: per round exactly one instance is built
 * (the constructor's `factory` line, counted over all eight processes' logs) and one `onActivate`
 * runs, and all eight get the same ref.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildApp } from '../helpers/child-app.js';
import { type ObjectRefOut, ObjectCluster, ask, lines, settle } from './object-nodes.js';

const PROCESSES = 8;
const ROUNDS = 50;

describe('eight processes get-or-create one id at once', () => {
  let cluster: ObjectCluster;
  let nodes: ChildApp[] = [];

  beforeAll(async () => {
    cluster = await ObjectCluster.start('e2e-race');
    nodes = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => cluster.node(`srv-${i}`, 'server')),
    );
    await Promise.all(nodes.map((n) => ask(n, { type: 'waitPeers', count: PROCESSES - 1 })));
  }, 120000);

  afterAll(() => cluster?.close());

  it(`${ROUNDS} rounds: one factory run and one activation per round, the same ref everywhere`, async () => {
    const winners = new Map<string, number>();
    const factories = () => nodes.reduce((n, app) => n + lines(app, 'factory').length, 0);
    for (let round = 0; round < ROUNDS; round++) {
      const id = `race-${round}`;
      const before = factories();
      // One wall-clock start for all: each child sleeps until then, so the eight claims overlap.
      const at = Date.now() + 40;
      const replies = await Promise.all(
        nodes.map((n) => ask<{ result: ObjectRefOut }>(n, { type: 'getOrCreate', id, at })),
      );
      const refs = replies.map((r) => r.result);
      expect(refs[0]).toMatchObject({ kind: 'spot', type: 'room', id, mesh: 'game' });
      for (const ref of refs) expect(ref).toEqual(refs[0]);
      // The creator wrote its factory and activate lines before its own reply: all are in by now.
      expect({ round, factories: factories() - before }).toEqual({ round, factories: 1 });
      const activations = nodes.flatMap((n) => lines(n, 'activate', id).map(() => n.name));
      expect({ round, activations }).toEqual({ round, activations: [(refs[0] as ObjectRefOut).rid] });
      const winner = (refs[0] as ObjectRefOut).rid;
      winners.set(winner, (winners.get(winner) ?? 0) + 1);
    }
    // The race is real: the claim went to different processes over the rounds.
    expect(winners.size).toBeGreaterThan(1);
    console.log(
      `objects e2e get-or-create race: rounds won per process ${JSON.stringify([...winners].sort())}`,
    );
    await settle(nodes);
    // No instance was ever built beyond the one per round, and the runtimes saw one activation each.
    expect(factories()).toBe(ROUNDS);
    const activated = nodes.flatMap((n) => lines(n, 'object').filter((m) => m.state === 'activated'));
    expect(activated).toHaveLength(ROUNDS);
    expect(nodes.flatMap((n) => lines(n, 'object').filter((m) => m.state === 'failed'))).toEqual([]);
  }, 180000);
});
