/**
 * The gateway of the sessions bench (bench/sessions.ts): an Object Client with a session listener per
 * kind measured (`bench-players-tcp`, `bench-players-tls`, `bench-players-websocket`), whose `login`
 * binds a session to the `bench-player` Actor it names, and which pushes to a resumable session as it
 * drops (the push a resume waits for). For the comparison it also calls an Actor straight (`toActor`),
 * `depth` requests outstanding (`direct`), and reports its own memory (`rss`). Env: BENCH_REDIS_URL,
 * BENCH_KEY_PREFIX; BENCH_SESSION_KINDS (comma-separated, default every kind) and BENCH_GATEWAY_RID,
 * for a gateway that measures one kind's idle sessions alone.
 */
import { type SessionListenOptions, ZLinkRuntime, type ZLinkSessionContext } from '../../lib/index.js';
import { PAYLOAD } from '../workload/payload.js';
import { emit, fail, onCommands } from '../workload/protocol.js';
import { BENCH_OBJECTS_MESH, objectsLocationStore } from './zlink-objects.js';
import {
  BENCH_PLAYER_TYPE,
  BENCH_SESSION_KINDS,
  type BenchSessionKind,
  type DirectCommand,
  HELD_PUSH_PACKET,
  benchListener,
  benchTls,
} from './zlink-sessions.js';

const kinds = (process.env.BENCH_SESSION_KINDS?.split(',') ?? BENCH_SESSION_KINDS) as BenchSessionKind[];

/** The listener entry of `kind` on loopback, port from the OS; `tls` with the test certificate. */
function listenEntry(kind: BenchSessionKind): SessionListenOptions {
  const at = { bindHost: '127.0.0.1', port: 0 };
  if (kind === 'tls') {
    const { key, cert } = benchTls();
    return { ...at, kind, tls: { key, cert } };
  }
  if (kind === 'websocket') return { ...at, kind, path: '/bench' };
  return { ...at, kind };
}

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
          listen: listenEntry(kind),
          maxInFlight: 256,
          maxPendingBytes: 16 * 1024 * 1024,
          // The bench's idle sessions never ping: opening 10,000 of them (TLS handshakes) may take
          // longer than the default idle timeout (3 × 10 s).
          heartbeatMs: 120_000,
        },
      ]),
    ),
  });
  for (const kind of kinds) {
    runtime.sessions.registerHook({
      listener: benchListener(kind),
      hook: 'dropped',
      source: `dropped on ${kind}`,
      fn: (session) => session.push(HELD_PUSH_PACKET, 1),
    });
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
  }
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
      } else if (command.type !== 'shutdown') throw new Error(`unknown command ${command.type}`);
    },
    async () => {
      await runtime.close();
      process.exit(0);
    },
  );
  const endpoints = Object.fromEntries(
    kinds.map((kind) => [kind, runtime.sessions.localEndpoint(benchListener(kind)) as string]),
  );
  emit({ type: 'ready', endpoints, pid: process.pid });
}

main().catch(fail);
