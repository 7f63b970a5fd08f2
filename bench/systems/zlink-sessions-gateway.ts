/**
 * The gateway of the sessions bench (bench/sessions.ts): an Object Client with the session listener
 * `bench-players`, whose `login` binds a session to the `bench-player` Actor it names. For the
 * comparison it also calls an Actor straight (`toActor`), `depth` requests outstanding (`direct`),
 * and reports its own memory (`rss`). Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX.
 */
import { ZLinkRuntime, type ZLinkSessionContext } from '../../lib/index.js';
import { PAYLOAD } from '../workload/payload.js';
import { emit, fail, onCommands } from '../workload/protocol.js';
import { BENCH_OBJECTS_MESH, objectsLocationStore } from './zlink-objects.js';
import { BENCH_PLAYER_TYPE, BENCH_SESSIONS_LISTENER, type DirectCommand } from './zlink-sessions.js';

async function main(): Promise<void> {
  const runtime = new ZLinkRuntime({
    locationStore: objectsLocationStore(),
    meshes: {
      [BENCH_OBJECTS_MESH]: {
        rid: 'bench-players-gateway',
        objectRole: 'client',
        discovery: 'auto',
        listen: { bindHost: '127.0.0.1', port: 0 },
      },
    },
    sessions: {
      [BENCH_SESSIONS_LISTENER]: {
        mesh: BENCH_OBJECTS_MESH,
        listen: { bindHost: '127.0.0.1', port: 0 },
        maxInFlight: 256,
        maxPendingBytes: 16 * 1024 * 1024,
      },
    },
  });
  runtime.sessions.registerHandler({
    listener: BENCH_SESSIONS_LISTENER,
    kind: 'request',
    packet: 'login',
    source: 'login',
    handler: async (actor, ctx) => {
      const ref = await runtime.objects.getOrCreateActor(BENCH_PLAYER_TYPE, actor as string);
      await (ctx as ZLinkSessionContext).session.bind(ref);
      return ref.rid;
    },
  });
  await runtime.start();
  await runtime.waitForPeers(BENCH_OBJECTS_MESH, 1, 30_000);

  async function direct(c: DirectCommand): Promise<void> {
    await runtime.objects.getOrCreateActor(BENCH_PLAYER_TYPE, c.actor);
    const target = runtime.routeClient.toActor(c.actor);
    let count = 0;
    let failed = 0;
    const end = performance.now() + c.durationMs;
    const lane = async (): Promise<void> => {
      while (performance.now() < end) {
        try {
          await target.request('echo', PAYLOAD).async();
          count++;
        } catch {
          failed++;
        }
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: c.depth }, lane));
    emit({
      type: 'direct-result',
      result: { perSec: (count * 1000) / (performance.now() - t0), count, failed },
    });
  }

  onCommands(
    async (command) => {
      if (command.type === 'direct') await direct(command as unknown as DirectCommand);
      else if (command.type === 'rss') {
        global.gc?.();
        emit({
          type: 'rss',
          rss: process.memoryUsage().rss,
          sessions: runtime.snapshot().sessions?.[0]?.sessions,
        });
      } else throw new Error(`unknown command ${command.type}`);
    },
    async () => {
      await runtime.close();
      process.exit(0);
    },
  );
  const endpoint = runtime.sessions.localEndpoint(BENCH_SESSIONS_LISTENER) as string;
  emit({ type: 'ready', port: Number(endpoint.split(':').pop()), pid: process.pid });
}

main().catch(fail);
