/**
 * The Redis State Store on a Redis Cluster (issue 54): two private cluster nodes, half the hash slots
 * each. Every script touches one key, so a batch's rows spread over both nodes and still answer in order
 * (one auto-pipeline per node); the whole State Store contract runs on it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import type { ObjectKey, StateStore } from '../../../lib/core/index.js';
import { closeRedisClient } from '../../../lib/store/redis/client.js';
import { RedisStateStore } from '../../../lib/store/redis/redis-state-store.js';
import { stateRowKey } from '../../../lib/store/redis/state-keys.js';
import { Cleanup } from '../../helpers/index.js';
import { RedisServer } from '../../helpers/redis-server.js';
import { stateStoreContract } from './state-store-contract.js';

const CLUSTER_READY_MS = 15000;

let nodes: RedisServer[] = [];

/** Runs `op` on a plain client of `node`, closed after. */
async function on<T>(
  node: RedisServer,
  op: (c: ReturnType<RedisServer['client']>) => Promise<T>,
): Promise<T> {
  const client = node.client();
  try {
    return await op(client);
  } finally {
    await closeRedisClient(client);
  }
}

/** Two cluster nodes that met, slots 0–8191 on the first and 8192–16383 on the second. */
beforeAll(async () => {
  nodes = [await RedisServer.startClusterNode(), await RedisServer.startClusterNode()];
  const [a, b] = nodes as [RedisServer, RedisServer];
  await on(a, (c) => c.call('CLUSTER', 'ADDSLOTSRANGE', '0', '8191'));
  await on(b, (c) => c.call('CLUSTER', 'ADDSLOTSRANGE', '8192', '16383'));
  // The bus port is not the client port + 10000 here (see startClusterNode): read it from the node itself.
  const myself = String(await on(b, (c) => c.call('CLUSTER', 'NODES')))
    .split('\n')
    .find((line) => line.includes('myself'));
  const busPort = /:\d+@(\d+)/.exec(myself ?? '')?.[1];
  if (!busPort) throw new Error(`no bus port in CLUSTER NODES: ${myself}`);
  await on(a, (c) => c.call('CLUSTER', 'MEET', '127.0.0.1', String(b.port), busPort));
  const deadline = Date.now() + CLUSTER_READY_MS;
  for (;;) {
    const infos = await Promise.all(nodes.map((n) => on(n, (c) => c.call('CLUSTER', 'INFO'))));
    if (infos.every((i) => /cluster_state:ok/.test(String(i)) && /cluster_known_nodes:2/.test(String(i))))
      break;
    if (Date.now() > deadline)
      throw new Error(`the cluster is not ok within ${CLUSTER_READY_MS} ms: ${String(infos[0])}`);
    await new Promise((done) => setTimeout(done, 50));
  }
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
});

const clusterOf = () => ({ nodes: [{ host: '127.0.0.1', port: nodes[0]!.port }] });

let prefixes = 0;
const prefixOf = new WeakMap<StateStore, string>();

stateStoreContract({
  name: 'RedisStateStore on a Cluster',
  handles: (n, { tombstoneTtlMs }) => {
    const keyPrefix = `cluster-state-${process.pid}-${++prefixes}`;
    return Array.from({ length: n }, () => {
      const store = new RedisStateStore({ cluster: clusterOf(), keyPrefix, tombstoneTtlMs });
      prefixOf.set(store, keyPrefix);
      return store;
    });
  },
  corrupt: async (store, key) => {
    const cluster = new Cluster(clusterOf().nodes);
    try {
      await cluster.hset(stateRowKey(prefixOf.get(store)!, key), 'epoch', 'not-a-number');
    } finally {
      await closeRedisClient(cluster);
    }
  },
});

describe('RedisStateStore on a Cluster', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.closeAll());

  it('a batch of batchLimit rows lands on both nodes and answers row by row, in order', async () => {
    const store = cleanup.add(
      new RedisStateStore({ cluster: clusterOf(), keyPrefix: `spread-${process.pid}` }),
    );
    await store.start();
    const keys: ObjectKey[] = Array.from({ length: store.batchLimit }, (_, i) => ({
      mesh: 'game',
      kind: 'actor',
      id: `p-${i}`,
    }));
    const adopted = await store.adopt(
      keys.map((key, i) => ({
        key,
        type: 'player',
        objectGeneration: i + 2,
        owner: { rid: 'node-a', nodeGeneration: 'g1' },
      })),
    );
    expect(adopted.every((r) => r.ok && r.saved.epoch === 1)).toBe(true);
    const written = await store.write(
      keys.map((key, i) => ({
        key,
        type: 'player',
        epoch: 1,
        expected: 0,
        schemaVersion: 1,
        state: Uint8Array.of(i % 256),
        timers: undefined,
        authority: { objectGeneration: i + 2, authorityOwnerGeneration: 0, rid: 'node-a' },
      })),
    );
    expect(written.every((r) => r.ok && r.version === 1)).toBe(true);
    // Each row answered for itself: re-adopting by one generation less than each row's last adopter
    // is refused with that row's own generation, in the batch's order.
    const refused = await store.adopt(
      keys.map((key, i) => ({
        key,
        type: 'player',
        objectGeneration: i + 1,
        owner: { rid: 'node-b', nodeGeneration: 'g1' },
      })),
    );
    expect(refused.map((r) => (r.ok ? 'adopted' : r.reason === 'newerOwner' && r.objectGeneration))).toEqual(
      keys.map((_, i) => i + 2),
    );
    const counts = await Promise.all(nodes.map((n) => on(n, (c) => c.dbsize())));
    expect(counts.every((count) => count > store.batchLimit / 4)).toBe(true);
  });
});
