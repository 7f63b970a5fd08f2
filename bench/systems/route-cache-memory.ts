/**
 * Memory per positive route-cache entry (bench/scale.ts): one RouteCache filled with `count` routes
 * the way the resolver makes them (each with its fences and its address encoded once), to 16 owner
 * runs, ids as an application would name them. Prints `{type:'route-cache', before, after}` after
 * two full collections each (run with `--expose-gc`). Usage: node route-cache-memory.js COUNT
 */
import type { NodeRun } from '../../lib/core/index.js';
import { type ReadyRoute, RouteCache, SYSTEM_CLOCK } from '../../lib/spot/resolve/index.js';
import { wireAddress } from '../../lib/spot/wire/index.js';
import { emit, fail } from '../workload/protocol.js';
import { SCALE_MESH, settledMemory } from './zlink-scale.js';

const OWNERS = 16;

async function main(): Promise<void> {
  const count = Number(process.argv[2]);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error('usage: route-cache-memory.js COUNT');
  const owners: NodeRun[] = Array.from({ length: OWNERS }, (_, i) => ({
    rid: `game-server-${i}`,
    nodeGeneration: `run-${i}-${Date.now().toString(36)}`,
  }));
  const farAway = Date.now() + 3_600_000;
  const cache = new RouteCache({
    maxAgeMs: 3_600_000,
    maxEntries: count,
    clock: SYSTEM_CLOCK,
    leases: { admissionDeadline: () => farAway },
  });
  const before = await settledMemory(cache.size);
  for (let i = 0; i < count; i++) {
    const id = `room-${i}`;
    const fences = {
      owner: owners[i % OWNERS] as NodeRun,
      objectGeneration: 1 + (i % 7),
      authorityOwnerGeneration: 1,
      ownerLeaseGeneration: 1,
    };
    const route: ReadyRoute = {
      tag: 'ReadyRoute',
      key: { mesh: SCALE_MESH, kind: 'spot', id },
      type: 'room',
      ...fences,
      storeVersion: i + 1,
      admissionDeadline: farAway,
      address: wireAddress('spot', id, fences),
    };
    if (!cache.close(cache.open('spot', id), route)) throw new Error(`route ${id} was not cached`);
  }
  const after = await settledMemory(cache.size);
  // Still used after the reading: the cache must not be collected before it.
  if (cache.lookup('spot', 'room-0') === undefined) throw new Error('the first route is gone');
  emit({ type: 'route-cache', before, after });
}

main().catch(fail);
