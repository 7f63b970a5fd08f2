/**
 * The gateway of the sessions bench (bench/sessions.ts): an Object Client with a session listener per
 * kind measured (`bench-players-tcp`, ...), whose `login` binds a session to the `bench-player` Actor
 * it names. For the comparison it also calls an Actor straight (`toActor`), `depth` requests
 * outstanding (`direct`), and reports its own memory (`rss`). Env: BENCH_REDIS_URL, BENCH_KEY_PREFIX;
 * BENCH_SESSION_KINDS (comma-separated, default every kind) and BENCH_GATEWAY_RID, for a gateway that
 * measures one kind's idle sessions alone.
 */
import { ZLinkRuntime, type ZLinkSessionContext } from '../../lib/index.js';
import { PAYLOAD } from '../workload/payload.js';
import { emit, fail, onCommands } from '../workload/protocol.js';
import { BENCH_OBJECTS_MESH, objectsLocationStore } from './zlink-objects.js';
import {
  BENCH_PLAYER_TYPE,
  BENCH_SESSION_KINDS,
  type BenchSessionKind,
  type DirectCommand,
  benchListener,
} from './zlink-sessions.js';

const kinds = (process.env.BENCH_SESSION_KINDS?.split(',') ?? BENCH_SESSION_KINDS) as BenchSessionKind[];

async function main(): Promise<void> {
  const runtime = new ZLinkRuntime({
    locationStore: objectsLocationStore(),
    meshes: {
      [BENCH_OBJECTS_MESH]: {
        rid: process.env.BENCH_GATEWAY_RID ?? 'bench-players-gateway',
        objectRole: 'client',
        discovery: 'auto',
        listen: { bindHost: '127.0.0.1', port: 0 },
      },
    },
    sessions: Object.fromEntries(
      kinds.map((kind) => [
        benchListener(kind),
        {
          mesh: BENCH_OBJECTS_MESH,
          listen: { bindHost: '127.0.0.1', port: 0 },
          maxInFlight: 256,
          maxPendingBytes: 16 * 1024 * 1024,
        },
      ]),
    ),
  });
  for (const kind of kinds)
    runtime.sessions.registerHandler({
      listener: benchListener(kind),
      kind: 'request',
      packet: 'login',
      source: `login on ${kind}`,
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
          sessions: (runtime.snapshot().sessions ?? []).reduce((n, l) => n + l.sessions, 0),
        });
      } else throw new Error(`unknown command ${command.type}`);
    },
    async () => {
      await runtime.close();
      process.exit(0);
    },
  );
  const ports = Object.fromEntries(
    kinds.map((kind) => {
      const endpoint = runtime.sessions.localEndpoint(benchListener(kind)) as string;
      return [kind, Number(endpoint.split(':').pop())];
    }),
  );
  emit({ type: 'ready', ports, pid: process.pid });
}

main().catch(fail);
