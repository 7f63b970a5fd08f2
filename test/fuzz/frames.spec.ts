/**
 * Frame fuzz (issue 9, item 2): hostile zeromq messages from raw sockets to live runtimes over real
 * sockets on 127.0.0.1 — a ClientServer listener, a ClientServer client and a RouteMesh MeshNode.
 *
 * Size: `ZLINK_FUZZ_FRAMES` inputs in all (default 100000, the CI size; `npm run fuzz` runs 10⁶),
 * shared 40/30/30 between the three targets. Seed: `ZLINK_FUZZ_SEED` (default: a fixed one; `random`: a fresh one, printed
 * first; the same seed replays the same inputs). `ZLINK_FUZZ_STRICT=1` waits for each input's events
 * before the next and names the first input that went uncounted.
 *
 * Checked per target: nothing reaches `process` (no uncaught exception or unhandled rejection); the
 * target counts at least the events its rules require for every input (see generator.ts); the heap
 * after GC is bounded (before/after printed); a normal call through the same runtime is answered
 * afterwards, and a bystander connected throughout still works.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { RecordKind, encodeServerState } from '../../lib/core/index.js';
import { ZLinkRuntime } from '../../lib/runtime/index.js';
import { Cleanup, waitFor } from '../helpers/index.js';
import { heapAfterGc, mb } from '../helpers/heap.js';
import {
  CS_CHANNEL,
  ECHO,
  FAKE_PEER_RID,
  MESH,
  MESH_CHANNEL,
  Rng,
  STATUS,
  clientTarget,
  fuzzSeed,
  inputs,
  meshTarget,
  serverTarget,
} from './generator.js';
import {
  type FeedReport,
  FakePeerSocket,
  FakeServerSocket,
  HostileDealers,
  countedSince,
  eventTotal,
  feed,
} from './targets.js';

const TOTAL = Number(process.env.ZLINK_FUZZ_FRAMES ?? 100000);
const SEED = fuzzSeed();
const STRICT = process.env.ZLINK_FUZZ_STRICT === '1';
/** Generous: ~10k inputs/s would already be far slower than measured; plus start-up and the final checks. */
const TIMEOUT_MS = 60000 + TOTAL * 0.3;
/** Heap after GC may grow this much over a target's run (caches with fixed bounds, V8's own code and ICs). */
const HEAP_SLACK_BYTES = 32 * 1024 * 1024;

const listen = { port: 0, bindHost: '127.0.0.1' } as const;
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

/** Whatever escapes to the process during a test: an uncaught exception or an unhandled rejection. */
const escaped: string[] = [];
const onRejection = (reason: unknown) => escaped.push(`unhandledRejection: ${String(reason)}`);
const onException = (error: unknown) => escaped.push(`uncaughtException: ${String(error)}`);
beforeAll(() => {
  process.stdout.write(`fuzz: seed ${SEED} (ZLINK_FUZZ_SEED=${SEED} replays it), ${TOTAL} inputs\n`);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
});
afterAll(() => {
  process.off('unhandledRejection', onRejection);
  process.off('uncaughtException', onException);
});

function report(target: string, r: FeedReport, before: number, after: number, counted: string): void {
  const rate = Math.round((r.inputs / Math.max(1, r.ms)) * 1000);
  const kinds = Object.entries(r.labels)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  process.stdout.write(
    `fuzz ${target}: ${r.inputs} inputs (${r.frames} frames, ${mb(r.bytes)} MB) in ${r.ms} ms (${rate}/s); ` +
      `events counted ${r.counted} ≥ expected ${r.expected}; ${r.tolerated} tolerated by design; ` +
      `heap after GC ${mb(before)} → ${mb(after)} MB; seed ${SEED}; inputs: ${kinds}; counted: ${counted}\n`,
  );
}

function check(r: FeedReport, before: number, after: number): void {
  expect(escaped).toEqual([]);
  expect(r.counted).toBeGreaterThanOrEqual(r.expected);
  expect(after - before).toBeLessThan(HEAP_SLACK_BYTES);
}

const share = (fraction: number) => Math.max(1, Math.round(TOTAL * fraction));

describe('fuzz: hostile frames to live runtimes over real sockets', () => {
  it(
    'a ClientServer listener survives hostile frames from raw DEALERs, counts each, and still answers',
    async () => {
      const server = cleanup.add(
        new ZLinkRuntime({ clientServer: { [CS_CHANNEL]: { server: { listen } } } }),
      );
      server.registerChannelHandler({
        channel: CS_CHANNEL,
        kind: 'request',
        packet: ECHO,
        handler: (p) => p,
        source: 'fuzz',
      });
      await server.start();
      const endpoint = server.localEndpoint(CS_CHANNEL) as string;
      // A well-behaved client connected throughout.
      const bystander = cleanup.add(
        new ZLinkRuntime({
          clientServer: { [CS_CHANNEL]: { client: { connect: [endpoint] } } },
          requestTimeoutMs: 10000,
        }),
      );
      await bystander.start();
      await bystander.waitForCandidates(CS_CHANNEL, 1, 5000);
      const dealers = cleanup.add(new HostileDealers(endpoint, 3));

      const base = eventTotal(server.events);
      const counts = new Map(server.events.counts);
      const before = await heapAfterGc();
      const r = await feed(
        inputs(new Rng(SEED), share(0.4), serverTarget),
        (frames) => dealers.send(frames),
        () => eventTotal(server.events) - base,
        { strict: STRICT },
      );
      await dealers.close();
      const after = await heapAfterGc();
      report('ClientServer listener', r, before, after, countedSince(server.events, counts));

      await expect(
        bystander.routeClient.requestToChannel(CS_CHANNEL, ECHO, { after: 1 }).async(),
      ).resolves.toEqual({ after: 1 });
      check(r, before, after);
    },
    TIMEOUT_MS,
  );

  it(
    'a ClientServer client survives hostile frames from its server (forged replies, foreign welcomes), counts each, and still calls',
    async () => {
      const fake = cleanup.add(
        await new FakeServerSocket({
          channel: CS_CHANNEL,
          serverRid: 'fuzz-server',
          generation: 'gen-a',
          weight: 100,
          draining: false,
          revision: 1,
        }).bind(),
      );
      const client = cleanup.add(
        new ZLinkRuntime({
          clientServer: { [CS_CHANNEL]: { client: { connect: [fake.endpoint] } } },
          requestTimeoutMs: 10000,
        }),
      );
      await client.start();
      await client.waitForCandidates(CS_CHANNEL, 1, 5000);

      const base = eventTotal(client.events);
      const counts = new Map(client.events.counts);
      const before = await heapAfterGc();
      const r = await feed(
        inputs(new Rng(SEED + 1), share(0.3), clientTarget),
        (frames) => fake.send(frames),
        () => eventTotal(client.events) - base,
        { strict: STRICT },
      );
      const after = await heapAfterGc();
      report('ClientServer client', r, before, after, countedSince(client.events, counts));

      // The fuzz left the server's state anywhere (weight 0, draining, another generation): a restart
      // with a new generation is what a real server would do, and the client takes it up.
      const ready = client.events.count('server_ready');
      await fake.send([
        Buffer.from(
          encodeServerState(RecordKind.Welcome, {
            channel: CS_CHANNEL,
            serverRid: 'fuzz-server',
            generation: `restarted-${SEED}`,
            weight: 100,
            draining: false,
            revision: 1,
          }),
        ),
      ]);
      await waitFor(
        () => client.events.count('server_ready') > ready,
        5000,
        'server_ready after the restart welcome',
      );
      fake.answering = true;
      await expect(client.routeClient.requestToChannel(CS_CHANNEL, ECHO, 'after').async()).resolves.toBe(
        'after',
      );
      expect(client.snapshot().pendingRequests).toBe(0);
      check(r, before, after);
    },
    TIMEOUT_MS,
  );

  it(
    'a RouteMesh MeshNode survives hostile frames from a peer (handshakes with wrong mesh, NodeRid, generation), counts each, and still answers',
    async () => {
      const node = cleanup.add(
        new ZLinkRuntime({
          meshes: {
            [MESH]: { rid: 'fuzz-node', listen, peers: [], channels: { [MESH_CHANNEL]: { role: 'server' } } },
          },
        }),
      );
      node.registerChannelHandler({
        channel: MESH_CHANNEL,
        kind: 'request',
        packet: ECHO,
        handler: (p) => p,
        source: 'fuzz',
      });
      node.registerNodeHandler({
        mesh: MESH,
        kind: 'request',
        packet: STATUS,
        handler: () => 'up',
        source: 'fuzz',
      });
      await node.start();
      const endpoint = node.meshEndpoint(MESH) as string;
      // A real peer connected throughout.
      const peer = cleanup.add(
        new ZLinkRuntime({
          meshes: {
            [MESH]: {
              rid: 'real-peer',
              listen,
              peers: [endpoint],
              channels: { [MESH_CHANNEL]: { role: 'client' } },
            },
          },
          requestTimeoutMs: 10000,
        }),
      );
      await peer.start();
      await peer.waitForPeers(MESH, 1, 5000);
      const fake = cleanup.add(
        await new FakePeerSocket({
          mesh: MESH,
          rid: FAKE_PEER_RID,
          generation: 'fake-gen-0',
          objectRole: 'none',
          memberships: [],
          revision: 1,
        }).connect(endpoint),
      );
      await node.waitForPeers(MESH, 2, 5000);

      const base = eventTotal(node.events);
      const counts = new Map(node.events.counts);
      const before = await heapAfterGc();
      const r = await feed(
        inputs(new Rng(SEED + 2), share(0.3), meshTarget),
        (frames) => fake.send(frames),
        () => eventTotal(node.events) - base,
        { strict: STRICT },
      );
      await fake.close();
      const after = await heapAfterGc();
      report('RouteMesh MeshNode', r, before, after, countedSince(node.events, counts));

      await expect(peer.routeClient.requestToChannel(MESH_CHANNEL, ECHO, 'after').async()).resolves.toBe(
        'after',
      );
      await expect(peer.routeClient.requestToNode(MESH, 'fuzz-node', STATUS, {}).async()).resolves.toBe('up');
      check(r, before, after);
    },
    TIMEOUT_MS,
  );
});
