/**
 * Issue 4 item 6, docs/protocol.md#no-resend-after-selection, docs/errors.md#which-call-can-end-with-what: a peer that leaves (closes, restarts, goes silent) leaves the candidates;
 * requests in flight to it end exactly once and are never resent; a new generation is admitted only
 * after a fresh handshake. Drain stops new channel calls while accepted work finishes.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { RecordKind, encodeMeshRequest, encodePayload } from '../../../lib/core/index.js';
import { ZLinkRuntime } from '../../../lib/runtime/index.js';
import { Cleanup, EventCollector, Gate, freePort, outcome, waitFor } from '../../helpers/index.js';
import { FakePeer, endpointOf, fakeState, startNode, tally, who } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

describe('peer loss', () => {
  it('a Server that goes away mid-request: its requests end RouteError once, nothing is resent, the survivor takes the next calls', async () => {
    const stall = new Gate();
    let executedOnB = 0;
    const b = await startNode(cleanup, {
      rid: 'node-b',
      channels: { match: { role: 'server' } },
      handlers: [
        [
          'match',
          'request',
          'who',
          async () => {
            executedOnB++;
            await stall.promise;
            return 'node-b';
          },
        ],
      ],
    });
    let executedOnC = 0;
    const c = await startNode(cleanup, {
      rid: 'node-c',
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'who', () => (executedOnC++, 'node-c')]],
    });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b), endpointOf(c)],
      channels: { match: { role: 'client' } },
    });
    await a.waitForCandidates('match', 2);
    const calls = Array.from({ length: 20 }, () =>
      outcome(a.routeClient.requestToChannel('match', 'who', 0).async({ timeoutMs: 10000 })),
    );
    await waitFor(() => executedOnB === 10 && executedOnC === 10, 5000, 'both servers running');
    const events = new EventCollector(a.events);
    await b.close();
    const results = await Promise.all(calls);
    expect(tally(results.map((r) => (r.ok ? r.value : r.code)))).toEqual({ 'node-c': 10, RouteError: 10 });
    await events.next('peer_lost', (e) => e.rid === 'node-b', 5000);
    expect(a.snapshot().pendingRequests).toBe(0);
    expect(
      tally(
        await Promise.all(
          Array.from({ length: 10 }, () => a.routeClient.requestToChannel('match', 'who', 0).async()),
        ),
      ),
    ).toEqual({
      'node-c': 10,
    });
    expect(executedOnB).toBe(10);
    expect(executedOnC).toBe(20);
    stall.open();
  });

  it('a node restarted on the same endpoint is a new generation, admitted after a fresh handshake', async () => {
    const port = await freePort();
    const b1 = await startNode(cleanup, {
      rid: 'node-b',
      port,
      nodeHandlers: [['request', 'gen', () => 'first']],
    });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [{ endpoint: `tcp://127.0.0.1:${port}`, rid: 'node-b' }],
    });
    await a.waitForPeers('game', 1);
    const generation1 = a.snapshot().meshes[0]?.peers[0]?.generation;
    expect(await a.routeClient.requestToNode('game', 'node-b', 'gen', 0).async()).toBe('first');
    const events = new EventCollector(a.events);
    await b1.close();
    await events.next('peer_lost', undefined, 5000);
    // Known but not ready: a Node direct call waits for it (up to its deadline) rather than NotFound.
    const early = a.routeClient.requestToNode('game', 'node-b', 'gen', 0).async({ timeoutMs: 10000 });
    const b2 = await startNode(cleanup, {
      rid: 'node-b',
      port,
      nodeHandlers: [['request', 'gen', () => 'second']],
    });
    expect(await early).toBe('second');
    const ready = await events.next('peer_ready', undefined, 5000);
    expect(ready.generation).not.toBe(generation1);
    expect(ready.generation).toBe(b2.generation);
  });

  it('a peer whose connection stays up but that says nothing for 3 s is dropped (a stuck process)', async () => {
    const a = await startNode(cleanup, { rid: 'node-a' });
    const events = new EventCollector(a.events);
    const fake = cleanup.add(new FakePeer(fakeState('sleepy')));
    await fake.connect(endpointOf(a));
    await a.waitForPeers('game', 1);
    const lost = await events.next('peer_lost', (e) => e.rid === 'sleepy', 6000);
    expect(lost.reason).toContain('silent');
    // A peer that keeps pinging stays.
    const awake = cleanup.add(new FakePeer(fakeState('awake')));
    await awake.connect(endpointOf(a));
    awake.pingEvery(500);
    await a.waitForPeers('game', 1);
    await new Promise((r) => setTimeout(r, 3500));
    expect(a.snapshot().meshes[0]?.peers.map((p) => p.rid)).toEqual(['awake']);
  });

  it('a hello that arrives while a loss is settled is read, though the node has no peer left to ping', async () => {
    // The loss lets the receive loop take what the socket holds before it ends the route's requests;
    // asking the socket (ZMQ_EVENTS) took the loop's wake-up, and a node that sends nothing stayed deaf.
    // That depended on where zeromq's I/O thread was: a few rounds, each with this thread held (as on a
    // loaded machine) while the next hello arrives.
    const a = await startNode(cleanup, { rid: 'node-a' });
    const events = new EventCollector(a.events);
    let current = cleanup.add(new FakePeer(fakeState('peer-0')));
    await current.connect(endpointOf(a));
    await a.waitForPeers('game', 1);
    for (let round = 1; round <= 6; round++) {
      const gone = current.state.rid;
      const lost = events.next('peer_lost', (e) => e.rid === gone, 6000);
      await current.close();
      await lost;
      current = cleanup.add(new FakePeer(fakeState(`peer-${round}`)));
      await current.connect(endpointOf(a));
      const until = Date.now() + 50;
      while (Date.now() < until);
      await a.waitForPeers('game', 1);
    }
  });
});

describe('drain over RouteMesh', () => {
  it('peers stop selecting a draining node, its accepted requests finish, late channel requests end Rejected, Node direct still answers', async () => {
    const gate = new Gate();
    const b = await startNode(cleanup, {
      rid: 'node-b',
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'slow', async () => (await gate.promise, 'done')]],
      nodeHandlers: [['request', 'whoami', () => 'node-b']],
    });
    const c = await startNode(cleanup, {
      rid: 'node-c',
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'slow', who('node-c')]],
    });
    const a = await startNode(cleanup, {
      rid: 'node-a',
      peers: [endpointOf(b), endpointOf(c)],
      channels: { match: { role: 'client' } },
    });
    await a.waitForCandidates('match', 2);
    // node-b < node-c: the first pick is node-b, which holds the request.
    const accepted = a.routeClient.requestToChannel('match', 'slow', 0).async({ timeoutMs: 10000 });
    await waitFor(() => (b.snapshot().meshes[0]?.activeHandlers ?? 0) === 1, 3000, 'accepted on b');
    const events = new EventCollector(a.events);
    const drained = b.drain();
    await events.next('peer_state', (e) => e.rid === 'node-b' && e.memberships[0]?.draining === true, 3000);
    expect(
      tally(
        await Promise.all(
          Array.from({ length: 5 }, () => a.routeClient.requestToChannel('match', 'slow', 0).async()),
        ),
      ),
    ).toEqual({
      'node-c': 5,
    });
    expect(await a.routeClient.requestToNode('game', 'node-b', 'whoami', 0).async()).toBe('node-b');
    gate.open();
    expect(await accepted).toBe('done');
    await drained;
    expect(b.snapshot().meshes[0]?.channels[0]).toMatchObject({ draining: true });
  });

  it('a channel request that reaches a draining node ends Rejected (it never ran)', async () => {
    let ran = 0;
    const b = await startNode(cleanup, {
      rid: 'node-b',
      channels: { match: { role: 'server' } },
      handlers: [['match', 'request', 'who', () => (ran++, 'b')]],
    });
    const fake = cleanup.add(new FakePeer(fakeState('caller')));
    await fake.connect(endpointOf(b as ZLinkRuntime));
    await b.waitForPeers('game', 1);
    const drained = b.drain();
    await fake.send(encodeMeshRequest(41, 'match', 'who', undefined, encodePayload(0)));
    await waitFor(() => fake.received.some((r) => r.kind === RecordKind.ErrorReply), 3000, 'the refusal');
    expect(fake.received.find((r) => r.kind === RecordKind.ErrorReply)).toMatchObject({
      correlation: 41,
      error: { code: 'ServerDraining' },
    });
    expect(ran).toBe(0);
    await drained;
  });

  it('a node that drains between its hello and the welcome still tells the node it said hello to: its going is a leave, not a loss', async () => {
    const port = await freePort();
    // The leaving node starts first; its link connects once the observer is bound.
    const leaver = await startNode(cleanup, {
      rid: 'leaver',
      peers: [`tcp://127.0.0.1:${port}`],
      channels: { match: { role: 'client' } },
    });
    const observer = cleanup.add(
      new ZLinkRuntime({
        meshes: { game: { rid: 'observer', listen: { bindHost: '127.0.0.1', port }, peers: [] } },
      }),
    );
    const events = cleanup.add(new EventCollector(observer.events));
    let drained: Promise<void> | undefined;
    let leaverPeers = -1;
    // Admitted on its hello: the welcome is not even written yet, so the leaver is no peer of the
    // observer's on its side when it drains (a node stopped just after it started).
    const stop = observer.events.subscribe((e) => {
      if (e.type !== 'peer_ready' || e.rid !== 'leaver' || drained) return;
      leaverPeers = leaver.snapshot().meshes[0]?.peers.length ?? -1;
      drained = leaver.drain();
    });
    await observer.start();
    await waitFor(() => drained !== undefined, 5000, 'the leaver admitted');
    stop();
    expect(leaverPeers).toBe(0);
    await drained;
    await leaver.close();
    const lost = await events.next('peer_lost', (e) => e.rid === 'leaver', 5000);
    expect(lost).toMatchObject({ draining: true });
    expect(events.of('peer_state').filter((e) => e.rid === 'leaver')).toMatchObject([{ draining: true }]);
  });
});
