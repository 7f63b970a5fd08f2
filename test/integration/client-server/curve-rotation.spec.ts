/**
 * A rolling key rotation with manual entries (issue 18): the entry of a server, publisher or MeshNode
 * peer that rolls to a new key pair lists both keys (`publicKey: [old, new]`), so whoever connects to it
 * reaches it under whichever it holds — before its restart and after — without a configuration change
 * in between. Calls go on through the restart and none fails (the drain's own refusals, which never ran,
 * are retried as a caller of a draining server does).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { type ZLinkKeyPair, type ZLinkRuntime, zlinkKeyPair } from '../../../lib/index.js';
import { Cleanup, freePort, underLoad, waitFor } from '../../helpers/index.js';
import { local, links, startPublisher, startSubscriber, subscribed } from '../fanout/harness.js';
import { startNode, who } from '../route-mesh/harness.js';
import { listen, startRuntime, waitForCandidates } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const callerKeys = zlinkKeyPair();

describe('rolling a key pair with manual entries that list both keys', () => {
  it('ClientServer: a server restarted under its new key is reached again; no request fails', async () => {
    const port = await freePort();
    const serve = (rid: string, keys: ZLinkKeyPair, at = 0) =>
      startRuntime(
        cleanup,
        {
          clientServer: { match: { server: { rid, listen: { ...listen, port: at } } } },
          security: { curve: { ...keys, allow: [callerKeys.publicKey] } },
        },
        [['request', 'who', () => rid]],
      );
    const [s1Keys, oldKeys, newKeys] = [zlinkKeyPair(), zlinkKeyPair(), zlinkKeyPair()];
    const s1 = await serve('s1', s1Keys);
    const s2 = await serve('s2', oldKeys, port);
    const client = await startRuntime(cleanup, {
      clientServer: {
        match: {
          client: {
            connect: [
              { endpoint: s1.endpoint('match') as string, publicKey: s1Keys.publicKey },
              { endpoint: `tcp://127.0.0.1:${port}`, publicKey: [oldKeys.publicKey, newKeys.publicKey] },
            ],
          },
        },
      },
      security: { curve: callerKeys },
    });
    await waitForCandidates(client, 'match', 2, 10000);
    const load = underLoad(() =>
      client.routeClient.requestToChannel('match', 'who', {}).async({ timeoutMs: 10000 }),
    );
    await new Promise((r) => setTimeout(r, 200));
    await s2.drain();
    await s2.close();
    const s2b = await serve('s2', newKeys, port);
    await waitFor(
      () =>
        client
          .snapshot()
          .channels[0]?.client?.connections.some((c) => c.ready && c.generation === s2b.generation) ?? false,
      15000,
      's2 ready under its new key',
    );
    const before = load.results.length;
    await new Promise((r) => setTimeout(r, 300));
    const refusedByDrain = await load.stop();
    expect(load.results.filter((r) => !r.ok)).toEqual([]);
    expect(refusedByDrain).toBeLessThan(5);
    expect(load.results.slice(before).some((r) => r.ok && r.value === 's2')).toBe(true);
    // The old key was tried first and refused by the new run: the second key is what reached it.
    expect(client.events.count('security_refused:handshakeFailed')).toBeGreaterThanOrEqual(1);
  });

  it('RouteMesh: a peer restarted under its new key is linked again; no channel request fails', async () => {
    const port = await freePort();
    const [cKeys, oldKeys, newKeys] = [zlinkKeyPair(), zlinkKeyPair(), zlinkKeyPair()];
    const allowA = { allow: [{ rid: 'node-a', publicKey: callerKeys.publicKey }] };
    const serverNode = (rid: string, keys: ZLinkKeyPair, at?: number): Promise<ZLinkRuntime> =>
      startNode(cleanup, {
        rid,
        port: at,
        channels: { match: { role: 'server' } },
        handlers: [['match', 'request', 'who', who(rid)]],
        extra: { security: { curve: { ...keys, ...allowA } } },
      });
    const c = await serverNode('node-c', cKeys);
    const b = await serverNode('node-b', oldKeys, port);
    const a = await startNode(cleanup, {
      rid: 'node-a',
      channels: { match: { role: 'client' } },
      peers: [
        {
          endpoint: `tcp://127.0.0.1:${port}`,
          rid: 'node-b',
          publicKey: [oldKeys.publicKey, newKeys.publicKey],
        },
        { endpoint: c.meshEndpoint('game') as string, rid: 'node-c', publicKey: cKeys.publicKey },
      ],
      extra: { security: { curve: callerKeys } },
    });
    await a.waitForCandidates('match', 2, 10000);
    const load = underLoad(() =>
      a.routeClient.requestToChannel('match', 'who', {}).async({ timeoutMs: 10000 }),
    );
    await new Promise((r) => setTimeout(r, 200));
    await b.drain();
    await b.close();
    const b2 = await serverNode('node-b', newKeys, port);
    await waitFor(
      () =>
        a.snapshot().meshes[0]?.peers.some((p) => p.rid === 'node-b' && p.generation === b2.generation) ??
        false,
      15000,
      'node-b linked again under its new key',
    );
    await a.waitForCandidates('match', 2, 10000);
    const before = load.results.length;
    await new Promise((r) => setTimeout(r, 300));
    const refusedByDrain = await load.stop();
    expect(load.results.filter((r) => !r.ok)).toEqual([]);
    expect(refusedByDrain).toBeLessThan(5);
    expect(load.results.slice(before).some((r) => r.ok && r.value === 'node-b')).toBe(true);
    expect(a.events.count('security_refused:handshakeFailed')).toBeGreaterThanOrEqual(1);
  });

  it('fanout: a publisher restarted under its new key is subscribed to again', async () => {
    const port = await freePort();
    const [oldKeys, newKeys] = [zlinkKeyPair(), zlinkKeyPair()];
    const publish = (keys: ZLinkKeyPair) =>
      startPublisher(
        cleanup,
        'news',
        { rid: 'news-1', listen: { ...local, port } },
        { security: { curve: { ...keys, allow: [callerKeys.publicKey] } } },
      );
    const first = await publish(oldKeys);
    const received: unknown[] = [];
    const sub = await startSubscriber(
      cleanup,
      'news',
      {
        connect: [{ endpoint: `tcp://127.0.0.1:${port}`, publicKey: [oldKeys.publicKey, newKeys.publicKey] }],
      },
      { notice: (e: unknown) => void received.push(e) },
      { security: { curve: callerKeys } },
    );
    await subscribed(sub, 'news');
    await first.close();
    const second = await publish(newKeys);
    const generation = second.generation;
    await waitFor(
      () => links(sub, 'news').some((l) => l.generation === generation),
      15000,
      'the publisher confirmed under its new key',
    );
    const deadline = Date.now() + 10000;
    while (received.length === 0 && Date.now() < deadline) {
      await second.fanoutClient.publish('news', 'notice', { n: 1 }).async();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(received[0]).toEqual({ n: 1 });
    // The old key was tried first and refused by the new run: the second key is what reached it.
    expect(sub.events.count('security_refused:handshakeFailed')).toBeGreaterThanOrEqual(1);
  });
});
