/**
 * docs/protocol.md#select-one, docs/protocol.md#one-send-path-per-channelname, docs/protocol.md#arrangements over real sockets: ChannelName select-one across a mesh — weights,
 * self-exclusion, no-candidate results, runtime weight, and channels sharing one ROUTER.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, Gate, outcome, waitFor } from '../../helpers/index.js';
import { endpointOf, startNode, tally, who } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

async function servers(weights: Record<string, number>): Promise<ZLinkRuntime[]> {
  const out: ZLinkRuntime[] = [];
  for (const [rid, weight] of Object.entries(weights)) {
    out.push(
      await startNode(cleanup, {
        rid,
        channels: { match: { role: 'server', weight } },
        handlers: [['match', 'request', 'who', who(rid)]],
      }),
    );
  }
  return out;
}

async function calls(client: ZLinkRuntime, n: number, channel = 'match'): Promise<Record<string, number>> {
  const answers: unknown[] = [];
  // Bounded concurrency keeps the order of picks the order of submits.
  for (let i = 0; i < n; i += 200) {
    const batch = Array.from({ length: Math.min(200, n - i) }, () =>
      client.routeClient.requestToChannel(channel, 'who', 0).async({ timeoutMs: 10000 }),
    );
    answers.push(...(await Promise.all(batch)));
  }
  return tally(answers);
}

describe('ChannelName select-one over RouteMesh', () => {
  it('three Servers weighted 100/100/200 share 8 000 calls 1:1:2 within 2%', async () => {
    const nodes = await servers({ 'node-b': 100, 'node-c': 100, 'node-d': 200 });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: nodes.map((n) => endpointOf(n)),
      channels: { match: { role: 'client' } },
    });
    await a.waitForCandidates('match', 3);
    const counts = await calls(a, 8000);
    expect(Math.abs((counts['node-b'] ?? 0) / 8000 - 0.25)).toBeLessThanOrEqual(0.02 * 0.25);
    expect(Math.abs((counts['node-c'] ?? 0) / 8000 - 0.25)).toBeLessThanOrEqual(0.02 * 0.25);
    expect(Math.abs((counts['node-d'] ?? 0) / 8000 - 0.5)).toBeLessThanOrEqual(0.02 * 0.5);
  });

  it('weights 100 and 300: four calls go B, A, B, B (A is the smaller NodeRid)', async () => {
    const nodes = await servers({ 'node-a': 100, 'node-b': 300 });
    const c = await startNode(cleanup, {
      rid: 'node-c',
      peers: nodes.map((n) => endpointOf(n)),
      channels: { match: { role: 'client' } },
    });
    await c.waitForCandidates('match', 2);
    const order: unknown[] = [];
    for (let i = 0; i < 4; i++) order.push(await c.routeClient.requestToChannel('match', 'who', 0).async());
    expect(order).toEqual(['node-b', 'node-a', 'node-b', 'node-b']);
  });

  it('the calling node is never its own candidate, even as a Server of the channel; the only other Server gets every call', async () => {
    const [b] = await servers({ 'node-b': 100 });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b as ZLinkRuntime)],
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'who', who('node-a')]],
    });
    await a.waitForCandidates('match', 1);
    expect(await calls(a, 100)).toEqual({ 'node-b': 100 });
    // And from B's side, A is the only candidate.
    await (b as ZLinkRuntime).waitForCandidates('match', 1);
    expect(await calls(b as ZLinkRuntime, 10)).toEqual({ 'node-a': 10 });
  });

  it('a node that is the only Server of its channel fails at once with NotFound (no waiting)', async () => {
    const a = await startNode(cleanup, {
      rid: 'node-a',
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'who', who('node-a')]],
    });
    const r = await outcome(a.routeClient.requestToChannel('match', 'who', 0).async({ timeoutMs: 5000 }));
    expect(r).toMatchObject({ ok: false, code: 'NotFound' });
    expect(r.ms).toBeLessThan(1000);
  });

  it('weight 0 at run time leaves other nodes\u2019 selection within one heartbeat (accepted work still finishes), Unavailable when it was the only one, and 100 restores it', async () => {
    const gate = new Gate();
    const b = await startNode(cleanup, {
      rid: 'node-b',
      channels: { match: { role: 'server' } },
      handlers: [
        ['match', 'request', 'who', who('node-b')],
        ['match', 'request', 'slow', async () => (await gate.promise, 'slow done')],
      ],
    });
    const [c] = await servers({ 'node-c': 100 });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b), endpointOf(c as ZLinkRuntime)],
      channels: { match: { role: 'client' } },
    });
    await a.waitForCandidates('match', 2);
    // node-b sorts first: the first pick goes there and stays in its handler.
    const accepted = a.routeClient.requestToChannel('match', 'slow', 0).async({ timeoutMs: 10000 });
    await waitFor(() => b.snapshot().meshes[0]?.activeHandlers === 1, 3000, 'accepted on node-b');
    const events = new EventCollector(a.events);
    b.setChannelWeight('match', 0);
    await events.next('peer_state', (e) => e.rid === 'node-b', 1000);
    expect(await calls(a, 50)).toEqual({ 'node-c': 50 });
    gate.open();
    expect(await accepted).toBe('slow done');
    (c as ZLinkRuntime).setChannelWeight('match', 0);
    await events.next('peer_state', (e) => e.rid === 'node-c', 1000);
    expect(await outcome(a.routeClient.requestToChannel('match', 'who', 0).async())).toMatchObject({
      code: 'Unavailable',
    });
    (b as ZLinkRuntime).setChannelWeight('match', 100);
    (c as ZLinkRuntime).setChannelWeight('match', 100);
    await a.waitForCandidates('match', 2, 1000);
    expect(await calls(a, 100)).toEqual({ 'node-b': 50, 'node-c': 50 });
    expect(() => (b as ZLinkRuntime).setChannelWeight('match', 10001)).toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    );
  });

  it('registering more ChannelNames adds no socket and no connection: one ROUTER, one link per peer pair', async () => {
    const channels = (n: number, role: 'server' | 'client') =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`ch${i}`, { role }]));
    const b = await startNode(cleanup, { rid: 'node-b', channels: channels(1, 'server') });
    const c = await startNode(cleanup, { rid: 'node-c', channels: channels(8, 'server') });
    const a1 = await startNode(cleanup, {
      rid: 'node-a1',
      peers: [endpointOf(b)],
      channels: channels(1, 'client'),
    });
    const a8 = await startNode(cleanup, {
      rid: 'node-a8',
      peers: [endpointOf(c)],
      channels: channels(8, 'client'),
    });
    await a1.waitForCandidates('ch0', 1);
    await a8.waitForCandidates('ch7', 1);
    for (const [one, eight] of [
      [a1, a8],
      [b, c],
    ] as const) {
      await waitFor(() => one.snapshot().meshes[0]?.connections === 1, 3000, 'one connection');
      await waitFor(() => eight.snapshot().meshes[0]?.connections === 1, 3000, 'one connection');
      const s1 = one.snapshot().meshes[0];
      const s8 = eight.snapshot().meshes[0];
      expect([s1?.sockets, s1?.connections, s1?.peers.length]).toEqual([1, 1, 1]);
      expect([s8?.sockets, s8?.connections, s8?.peers.length]).toEqual([1, 1, 1]);
    }
    expect(a8.snapshot().meshes[0]?.channels).toHaveLength(8);
  });
});
