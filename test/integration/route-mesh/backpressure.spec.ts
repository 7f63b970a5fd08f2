/**
 * Admission over RouteMesh (docs/protocol.md#when-a-call-is-finished): a send completes when the MeshNode's source-local queue accepts
 * it; a queue that stays full ends sends `Timeout` at their deadline; every accepted send is
 * delivered once, however long the receiving node stopped reading, and a node whose handlers are all
 * busy still reads the replies its own handlers wait for.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Cleanup, EventCollector, Gate, sendWavesUntilTimeout, waitFor } from '../../helpers/index.js';
import { endpointOf, startNode } from './harness.js';

const cleanup = new Cleanup();
/** How many events of each type and reason a node emitted: what a failed wait names. */
const countTypes = (events: readonly { type: string; reason?: unknown }[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const e of events) {
    const key = typeof e.reason === 'string' ? `${e.type}: ${e.reason.slice(0, 60)}` : e.type;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
};
afterEach(() => cleanup.closeAll());

describe('RouteMesh admission and backpressure', () => {
  it('a stalled Server: sends end Timeout once the queue stays full; stalled past the 3 s silence limit it loses no peer, and every accepted send is handled exactly once after', async () => {
    const gate = new Gate();
    let started = 0;
    let finished = 0;
    const b = await startNode(cleanup, {
      rid: 'node-b',
      channels: { match: { role: 'server' } },
      extra: { handlerConcurrency: 1 },
      handlers: [
        [
          'match',
          'send',
          'note',
          async () => {
            started++;
            await gate.promise;
            finished++;
          },
        ],
      ],
    });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b)],
      channels: { match: { role: 'client' } },
      extra: { sendQueueLimit: 4 },
    });
    await a.waitForCandidates('match', 1);
    const eventsA = cleanup.add(new EventCollector(a.events));
    const eventsB = cleanup.add(new EventCollector(b.events));
    const payload = 'x'.repeat(4096);
    const { accepted, timedOut, others } = await sendWavesUntilTimeout(
      () => a.routeClient.sendToChannel('match', 'note', payload).async({ timeoutMs: 400 }),
      400_000,
    );
    expect(others).toEqual([]);
    expect(timedOut.length).toBeGreaterThan(0);
    // The bound holds business records; control records (a ping a second to the stalled peer) skip it.
    expect(a.snapshot().meshes[0]?.queued).toBeLessThanOrEqual(4 + 8);
    expect(started).toBe(1);
    // B has stopped reading (its waiting list is full), so A's pings wait unread in B's socket, and so
    // do the answers to B's ZMTP PINGs. Held past the 3 s silence limit, that is no peer's silence.
    await new Promise((r) => setTimeout(r, 4000));
    gate.open();
    await waitFor(
      () => finished >= accepted,
      30000,
      () =>
        `all ${accepted} accepted sends handled (started ${started}, finished ${finished}; ` +
        `events at B: ${JSON.stringify(countTypes(eventsB.events))}, at A: ${JSON.stringify(countTypes(eventsA.events))})`,
    );
    expect([...eventsA.of('peer_lost'), ...eventsB.of('peer_lost')]).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect({ started, finished }).toEqual({ started: accepted, finished: accepted });
  }, 60000);

  it('with every job permit held by handlers that call a peer, the replies still get read (no deadlock)', async () => {
    const c = await startNode(cleanup, {
      rid: 'node-c',
      nodeHandlers: [['request', 'inner', (n) => n]],
    });
    const b = await startNode(cleanup, {
      rid: 'node-b',
      peers: [endpointOf(c)],
      extra: { handlerConcurrency: 2 },
      nodeHandlers: [
        [
          'request',
          'outer',
          async (n) => {
            const inner = await b.routeClient
              .requestToNode('game', 'node-c', 'inner', n)
              .async({ timeoutMs: 5000 });
            return `outer(${String(inner)})`;
          },
        ],
      ],
    });
    const a = await startNode(cleanup, { rid: 'node-a', peers: [endpointOf(b)] });
    await a.waitForPeers('game', 1);
    await b.waitForPeers('game', 2);
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        a.routeClient.requestToNode('game', 'node-b', 'outer', i).async({ timeoutMs: 10000 }),
      ),
    );
    expect(replies).toEqual(Array.from({ length: 50 }, (_, i) => `outer(${i})`));
  });
});
