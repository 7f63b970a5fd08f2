/**
 * docs/protocol.md#node-direct, docs/protocol.md#handler-scopes-and-context, docs/errors.md#which-call-can-end-with-what over real sockets: Node direct reaches exactly the named NodeRid, its handlers live
 * in a namespace per MeshName, and its context names the mesh and the source node.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ZLinkNodeMessageContext } from '../../../lib/core/index.js';
import { Cleanup, Gate, outcome, waitFor } from '../../helpers/index.js';
import { endpointOf, startNode, tally } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('Node direct', () => {
  it('1 000 requests to a named NodeRid all land on that node, never on another', async () => {
    const nodeHandlers = (name: string) => [['request', 'whoami', () => name] as const];
    const b = await startNode(cleanup, { rid: 'node-b', nodeHandlers: nodeHandlers('node-b') });
    const c = await startNode(cleanup, { rid: 'node-c', nodeHandlers: nodeHandlers('node-c') });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b), { endpoint: endpointOf(c), rid: 'node-c' }],
    });
    await a.waitForPeers('game', 2);
    const answers = await Promise.all(
      Array.from({ length: 1000 }, () =>
        a.routeClient.requestToNode('game', 'node-c', 'whoami', {}).async<string>({ timeoutMs: 10000 }),
      ),
    );
    expect(tally(answers)).toEqual({ 'node-c': 1000 });
  });

  it('the handler context carries meshName, sourceRid, packet, kind and frozen metadata; sends arrive too', async () => {
    const seen: ZLinkNodeMessageContext[] = [];
    const b = await startNode(cleanup, {
      rid: 'node-b',
      nodeHandlers: [
        ['request', 'echo', (payload, ctx) => (seen.push(ctx), payload)],
        ['send', 'note', (_payload, ctx) => void seen.push(ctx)],
      ],
    });
    const a = await startNode(cleanup, { rid: 'node-a', peers: [endpointOf(b)] });
    await a.waitForPeers('game', 1);
    const reply = await a.routeClient
      .requestToNode('game', 'node-b', 'echo', { n: 1 })
      .metadata('tenant-id', 't-1')
      .async({ timeoutMs: 5000 });
    expect(reply).toEqual({ n: 1 });
    await a.routeClient.sendToNode('game', 'node-b', 'note', 'hi').async();
    await b.waitForPeers('game', 1);
    expect(seen[0]).toMatchObject({ meshName: 'game', sourceRid: 'node-a', packet: 'echo', kind: 'request' });
    expect(seen[0]?.metadata).toEqual({ 'tenant-id': 't-1' });
    expect(Object.isFrozen(seen[0]?.metadata)).toBe(true);
    expect('channelName' in (seen[0] as object)).toBe(false);
  });

  it("sourceRid names each record's own sender when bursts from two peers interleave and wait for permits", async () => {
    const gate = new Gate();
    const mismatched: string[] = [];
    let handled = 0;
    const b = await startNode(cleanup, {
      rid: 'node-b',
      extra: { handlerConcurrency: 1 },
      nodeHandlers: [
        [
          'send',
          'from',
          async (from, ctx) => {
            // Held at first: the records behind it wait for the one permit while frames from the other peer are read.
            await gate.promise;
            if (ctx.sourceRid !== from) mismatched.push(`${String(from)} as ${ctx.sourceRid}`);
            handled++;
          },
        ],
      ],
    });
    const senders = await Promise.all(
      ['node-a', 'node-c'].map((rid) => startNode(cleanup, { rid, peers: [endpointOf(b)] })),
    );
    await b.waitForPeers('game', 2);
    await Promise.all(senders.map((s) => s.waitForPeers('game', 1)));
    const burst = (n: number) =>
      Promise.all(
        senders.flatMap((s) =>
          Array.from({ length: n }, () =>
            s.routeClient.sendToNode('game', 'node-b', 'from', s.rid('game')).async(),
          ),
        ),
      );
    for (let round = 0; round < 5; round++) await burst(200);
    gate.open();
    for (let round = 0; round < 5; round++) await burst(200);
    await waitFor(
      () => handled === 4000,
      20000,
      () => `4000 sends handled (${handled})`,
    );
    expect(mismatched).toEqual([]);
  });

  it('calls go both ways over the one link, whichever side initiated it', async () => {
    const b = await startNode(cleanup, {
      rid: 'node-b',
      nodeHandlers: [['request', 'whoami', () => 'node-b']],
    });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b)],
      nodeHandlers: [['request', 'whoami', () => 'node-a']],
    });
    await a.waitForPeers('game', 1);
    await b.waitForPeers('game', 1);
    expect(await a.routeClient.requestToNode('game', 'node-b', 'whoami', 0).async()).toBe('node-b');
    expect(await b.routeClient.requestToNode('game', 'node-a', 'whoami', 0).async()).toBe('node-a');
    expect(a.snapshot().meshes[0]?.peers[0]?.via).toBe('outbound');
    expect(b.snapshot().meshes[0]?.peers[0]?.via).toBe('inbound');
  });

  it('an unknown NodeRid, this node itself and an unregistered MeshName end NotFound at once; a known RID that never comes ends Timeout', async () => {
    const b = await startNode(cleanup, { rid: 'node-b' });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b), { endpoint: 'tcp://127.0.0.1:1', rid: 'node-z' }],
    });
    await a.waitForPeers('game', 1);
    const call = (mesh: string, rid: string) =>
      outcome(a.routeClient.requestToNode(mesh, rid, 'x', 0).async({ timeoutMs: 300 }));
    expect(await call('game', 'node-q')).toMatchObject({ code: 'NotFound' });
    expect(await call('game', 'node-a')).toMatchObject({ code: 'NotFound' });
    expect(await call('other', 'node-b')).toMatchObject({ code: 'NotFound' });
    expect(await call('game', 'node-z')).toMatchObject({ code: 'Timeout' });
    // A packet the target has no Node direct handler for: an error reply from that node.
    expect(await call('game', 'node-b')).toMatchObject({
      code: 'RemoteError',
      error: { remote: { code: 'NoHandler' } },
    });
  });
});
