/**
 * The creator of the scale bench (bench/scale.ts): a plain runtime on the scale mesh (objectRole
 * 'client') that creates objects on a named server with a number of creations in flight (`create`
 * → `{type:'created', result}`) and moves Spots between the two servers, each lane one Spot moved
 * again as soon as its last move ended (`relocate` → `{type:'relocated', result}`).
 * Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX.
 */
import { ZLinkRuntime, isZLinkError } from '../../lib/index.js';
import { emit, fail, onCommands } from '../workload/protocol.js';
import {
  type CreateCommand,
  type CreateResult,
  type RelocateCommand,
  type RelocateResult,
  SCALE_ACTOR_TYPE,
  SCALE_MESH,
  SCALE_SERVERS,
  SCALE_SPOT_TYPE,
  scaleStores,
} from './zlink-scale.js';

const PEERS_TIMEOUT_MS = 30_000;

async function main(): Promise<void> {
  const runtime = new ZLinkRuntime({
    locationStore: scaleStores().locationStore,
    meshes: {
      [SCALE_MESH]: {
        rid: 'bench-scale-client',
        objectRole: 'client',
        discovery: 'auto',
        listen: { bindHost: '127.0.0.1', port: 0 },
        // The creator talks to each object once: caching its route would only fill this process.
        objects: { routeCacheMaxAgeMs: 0 },
      },
    },
  });
  await runtime.start();
  await runtime.waitForPeers(SCALE_MESH, SCALE_SERVERS.length, PEERS_TIMEOUT_MS);
  const { objects } = runtime;

  async function create(c: CreateCommand): Promise<CreateResult> {
    const type = c.kind === 'spot' ? SCALE_SPOT_TYPE : SCALE_ACTOR_TYPE;
    let next = c.from;
    const end = c.from + c.count;
    let created = 0;
    let failed = 0;
    const lane = async (): Promise<void> => {
      while (next < end) {
        const id = `${c.prefix}-${next++}`;
        try {
          if (c.kind === 'spot') await objects.createSpot(type, id, { node: c.node });
          else await objects.createActor(type, id, { node: c.node });
          created++;
        } catch (error) {
          failed++;
          if (failed === 1) emit({ type: 'log', message: `create ${id}: ${describe(error)}` });
        }
      }
    };
    const start = performance.now();
    await Promise.all(Array.from({ length: c.concurrency }, lane));
    return { created, failed, ms: performance.now() - start };
  }

  async function relocate(c: RelocateCommand): Promise<RelocateResult> {
    let committed = 0;
    let aborted = 0;
    let failed = 0;
    const start = performance.now();
    const until = start + c.durationMs;
    const lane = async (i: number): Promise<void> => {
      const id = `${c.prefix}-${i}`;
      while (performance.now() < until) {
        try {
          const moved = await objects.relocate(id);
          if (moved.outcome === 'committed') committed++;
          else aborted++;
        } catch (error) {
          failed++;
          if (failed === 1) emit({ type: 'log', message: `relocate ${id}: ${describe(error)}` });
        }
      }
    };
    await Promise.all(Array.from({ length: c.concurrency }, (_, i) => lane(i)));
    return { committed, aborted, failed, ms: performance.now() - start };
  }

  const stop = async (): Promise<void> => {
    setTimeout(() => process.exit(0), 3000).unref();
    await runtime.close();
    process.exit(0);
  };
  onCommands(async (command) => {
    if (command.type === 'create')
      emit({ type: 'created', result: await create(command as unknown as CreateCommand) });
    else if (command.type === 'relocate')
      emit({ type: 'relocated', result: await relocate(command as unknown as RelocateCommand) });
    else if (command.type === 'shutdown') await stop();
    else throw new Error(`unknown command ${command.type}`);
  }, stop);
  emit({ type: 'ready', pid: process.pid });
}

const describe = (error: unknown): string =>
  isZLinkError(error) ? `${error.code}: ${error.message}` : String(error);

main().catch(fail);
