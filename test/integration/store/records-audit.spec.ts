/**
 * What `nestjs-zlink records` removes, on a private redis-server (issue 51): a relocation record is
 * removed only while both ends of its move hold no lease, re-checked in the script that deletes it
 * (an end that regains its lease after the listing keeps the record), and each key is listed once
 * when one key prefix is nested in the other. The whole command against object nodes is in
 * test/e2e/store-records.spec.ts.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { MeshNodeDescriptor, NodeRun } from '../../../lib/core/index.js';
import { openRecordsAudit } from '../../../lib/store/index.js';
import { RedisAuthorityStore, RedisRelocationStore } from '../../../lib/store/redis/redis-object-stores.js';
import { RedisLocationStore } from '../../../lib/store/redis/redis-location-store.js';
import { Cleanup } from '../../helpers/index.js';
import { useRedis } from './fixtures.js';
import { authority, freshKey, relocation } from './object-fixtures.js';

const redisServer = useRedis();
const cleanup = new Cleanup();
afterEach(() => cleanup.closeAll());

const SOURCE: NodeRun = { rid: 'node-a', nodeGeneration: 'g1' };
const TARGET: NodeRun = { rid: 'node-b', nodeGeneration: 'g1' };

function meshNode(mesh: string, run: NodeRun): MeshNodeDescriptor {
  return {
    kind: 'mesh-node',
    mesh,
    rid: run.rid,
    generation: run.nodeGeneration,
    endpoint: 'tcp://127.0.0.1:1',
    objectRole: 'server',
    memberships: [],
    revision: 1,
  };
}

/** The stores and the audit of one deployment on the suite's Redis, under fresh prefixes. */
async function deployment(keyPrefix: string, relocationPrefix: string) {
  const redis = redisServer.current.url;
  const location = cleanup.add(new RedisLocationStore({ redis, keyPrefix }));
  const authorities = cleanup.add(new RedisAuthorityStore({ redis, keyPrefix }));
  const moves = cleanup.add(new RedisRelocationStore({ redis, keyPrefix: relocationPrefix }));
  const audit = cleanup.add(await openRecordsAudit(redis, keyPrefix, relocationPrefix));
  return { location, authorities, moves, audit };
}

let deployments = 0;
const freshPrefix = () => `audit${++deployments}-${process.pid}`;

describe('nestjs-zlink records on relocation records', () => {
  it.each<[string, NodeRun]>([
    ['source', SOURCE],
    ['target', TARGET],
  ])(
    'a move listed stale whose %s regains its lease before the removal is kept; once both are gone it goes',
    async (_end, comesBack) => {
      const prefix = freshPrefix();
      const { location, moves, audit } = await deployment(prefix, `${prefix}-moves`);
      const key = freshKey();
      const written = await moves.compareAndSet(
        key,
        'absent',
        relocation({
          source: { ...relocation().source, ...SOURCE },
          target: { ...relocation().target, ...TARGET },
        }),
      );
      expect(written.ok).toBe(true);

      // Both ends fenced (no lease entry): listed stale.
      const listing = await audit.list();
      const listed = listing.filter((r) => r.kind === 'relocation');
      expect(listed).toMatchObject([{ state: 'stale', writerAlive: false }]);

      // One end gets its lease back between the listing and the removal: the move goes on.
      const descriptor = meshNode(key.mesh, comesBack);
      await location.put(descriptor, 10000);
      expect(await audit.removeStale(listing)).toBe(0);
      expect(await moves.get(key)).toMatchObject({ version: written.ok ? written.version : -1 });
      expect((await audit.list()).filter((r) => r.kind === 'relocation')).toMatchObject([{ state: 'live' }]);

      // Both gone again: removed.
      await location.remove(descriptor);
      const again = await audit.list();
      expect(again.filter((r) => r.kind === 'relocation')).toMatchObject([{ state: 'stale' }]);
      expect(await audit.removeStale(again)).toBe(1);
      expect(await moves.get(key)).toBeUndefined();
    },
  );
});

describe('nestjs-zlink records with nested key prefixes', () => {
  it.each<[string, (p: string) => [string, string]]>([
    ['the relocation prefix under the key prefix', (p) => [p, `${p}:moves`]],
    ['the key prefix under the relocation prefix', (p) => [`${p}:loc`, p]],
    ['one prefix for both', (p) => [p, p]],
  ])('%s: each key is listed once, as its own kind', async (_what, prefixes) => {
    const [keyPrefix, relocationPrefix] = prefixes(freshPrefix());
    const { location, authorities, moves, audit } = await deployment(keyPrefix, relocationPrefix);
    const key = freshKey();
    await location.put(meshNode(key.mesh, SOURCE), 10000);
    expect((await authorities.compareAndSet(key, 'absent', authority({ owner: SOURCE }))).ok).toBe(true);
    expect((await moves.compareAndSet(key, 'absent', relocation())).ok).toBe(true);

    const listed = await audit.list();
    const keys = listed.map((r) => r.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(listed.map((r) => r.kind).sort()).toEqual([
      'authority',
      'counter', // the Authority Store's
      'counter', // the Relocation Store's
      'descriptor',
      'relocation',
    ]);
  });
});
