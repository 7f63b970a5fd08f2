/**
 * CURVE between two OS processes (issue 18): a child process runs a MeshNode, a ClientServer server and
 * a fanout publisher under CURVE; this process reaches each through its own TCP proxy that records every
 * byte. With every call, reply and event marked, none of the markers — payload, metadata, RIDs — crosses
 * any proxy in clear, while the child's own execution log shows every call ran there exactly once. A
 * runtime holding a key the child does not know, sent through the same proxies, is refused on every
 * socket and runs nothing (the child's log stays as it was).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ZLinkKeyPair, ZLinkRuntime, zlinkKeyPair } from '../../lib/index.js';
import { ChildApp } from '../helpers/child-app.js';
import { Cleanup, EventCollector, outcome, waitFor } from '../helpers/index.js';
import { RecordingProxy } from '../helpers/tcp-proxy.js';

const PAYLOAD = 'e2e-curve-payload-61c2f9';
const META = 'e2e-curve-metadata-0b7d3e';
const EVENT = 'e2e-curve-event-a4419c';

const childKeys = zlinkKeyPair();
const testKeys = zlinkKeyPair();

function port(endpoint: string): number {
  return Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
}

describe('CURVE between two processes, every socket through a recording proxy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zlink-curve-'));
  const executionLog = join(dir, 'ran.log');
  const cleanup = new Cleanup();
  let child: ChildApp;
  const proxies: Record<'mesh' | 'clientServer' | 'fanout', RecordingProxy> = {} as never;
  const ran = (): string[] => {
    try {
      return readFileSync(executionLog, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };

  /** A runtime in this process reaching the child's three sockets through the proxies, under `keys`. */
  function caller(keys: ZLinkKeyPair, rid: string, events: unknown[]): ZLinkRuntime {
    const key = childKeys.publicKey;
    const runtime = cleanup.add(
      new ZLinkRuntime({
        meshes: {
          game: {
            rid,
            listen: { bindHost: '127.0.0.1', port: 0 },
            peers: [{ endpoint: proxies.mesh.endpoint, rid: 'secure-node', publicKey: key }],
          },
        },
        clientServer: {
          secure: { client: { connect: [{ endpoint: proxies.clientServer.endpoint, publicKey: key }] } },
        },
        fanout: {
          news: { subscriber: { connect: [{ endpoint: proxies.fanout.endpoint, publicKey: key }] } },
        },
        security: { curve: keys },
      }),
    );
    runtime.registerFanoutHandler({
      channel: 'news',
      kind: 'send',
      packet: 'notice',
      handler: (e: unknown) => void events.push(e),
      source: 'test.notice',
    });
    return runtime;
  }

  beforeAll(async () => {
    child = new ChildApp('curve-node', 'e2e/curve-node.app.js', {
      keys: childKeys,
      allow: testKeys.publicKey,
      executionLog,
    });
    const ready = await child.next('ready');
    for (const name of ['mesh', 'clientServer', 'fanout'] as const) {
      const proxy = cleanup.add(await RecordingProxy.start());
      proxy.target = port(ready[name] as string);
      proxies[name] = proxy;
    }
  });

  afterAll(async () => {
    await cleanup.closeAll();
    child?.kill();
    await child?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('no payload, metadata, event or RID crosses in clear; every call ran once in the other process', async () => {
    const events: unknown[] = [];
    const runtime = caller(testKeys, 'test-node', events);
    await runtime.start();
    await runtime.waitForPeers('game', 1, 10000);
    await runtime.waitForCandidates('secure', 1, 10000);
    for (let i = 0; i < 20; i++) {
      const cs = await runtime.routeClient
        .requestToChannel('secure', 'echo', { text: PAYLOAD, i })
        .metadata('note', META)
        .async({ timeoutMs: 5000 });
      expect(cs).toEqual({ text: PAYLOAD, i });
      const node = await runtime.routeClient
        .requestToNode('game', 'secure-node', 'echo', { text: PAYLOAD, i })
        .metadata('note', META)
        .async({ timeoutMs: 5000 });
      expect(node).toEqual({ text: PAYLOAD, i });
    }
    await waitFor(
      () => runtime.snapshot().fanout[0]?.subscriber?.publishers[0]?.rid !== undefined,
      10000,
      'the publisher confirmed',
    );
    const deadline = Date.now() + 10000;
    while (events.length < 5 && Date.now() < deadline)
      await child.call({ type: 'publish', event: { text: EVENT } });
    expect(events[0]).toEqual({ text: EVENT });

    const log = ran();
    expect(log.filter((l) => l === 'cs')).toHaveLength(20);
    expect(log.filter((l) => l === 'mesh')).toHaveLength(20);
    for (const [name, proxy] of Object.entries(proxies)) {
      expect({ name, big: proxy.bytes.length > 1000 }).toEqual({ name, big: true });
      for (const marker of [
        PAYLOAD,
        META,
        EVENT,
        'secure-node',
        'secure-server',
        'news-publisher',
        'test-node',
      ])
        expect({ name, marker, seen: proxy.saw(marker) }).toEqual({ name, marker, seen: false });
    }
    await runtime.close();
  });

  it('a runtime holding a key the other process does not know is refused on every socket; nothing runs', async () => {
    const before = ran().length;
    const events: unknown[] = [];
    const stranger = caller(zlinkKeyPair(), 'test-node', events);
    const saw = new EventCollector(stranger.events);
    await stranger.start();
    for (const route of ['route-mesh', 'client-server', 'fanout'])
      await saw.next('security_refused', (e) => e.reason === 'unknownKey' && e.route === route, 10000);
    const cs = await outcome(
      stranger.routeClient.requestToChannel('secure', 'echo', { text: PAYLOAD }).async({ timeoutMs: 300 }),
    );
    const node = await outcome(
      stranger.routeClient
        .requestToNode('game', 'secure-node', 'echo', { text: PAYLOAD })
        .async({ timeoutMs: 300 }),
    );
    await child.call({ type: 'publish', event: { text: EVENT } });
    expect([cs.ok, node.ok]).toEqual([false, false]);
    expect(ran()).toHaveLength(before);
    expect(events).toEqual([]);
  });
});
